"""schemathesis hooks for scripts/test-contract (loaded through SCHEMATHESIS_HOOKS).

They cover what the OpenAPI document states in words because JSON Schema cannot state it, for the
positive cases only (a case meant to be valid); negative cases are left as generated.
- No text may hold a NUL character (refused with 400 naming the field; StorableTextTests checks
  it on both backends). schemathesis.toml's allow-x00 keeps most generated text free of it; a
  positive case that still holds one is dropped.
- A quiet time whose start equals its end is refused with 400 naming `quiet_time.end`
  (QuietTimeAPITests checks it); a positive case with one is dropped.
- Platform credentials hold keys (an APNs .p8, a service account's RSA key) whose validity no
  schema states: a positive POST /admin/v1/apps/{app}/platforms gets real throw-away credentials
  of its type (those scripts/contract/setup.py uses, from HERALD_CONTRACT_KEY_DIR), so that the
  case checks that Herald accepts a valid platform, as the document says.
- A push stored under a given schedule id (PUT /admin/v1/apps/{app}/schedules/{schedule_id}) must
  be for later, as its description says: a positive case gets `scheduleIn` of an hour instead of
  whatever time it gave (a push for now is a 400 naming `scheduleAt`, which no schema can state).
- A geofence's times are checked against the clock and against the stored geofence (expiry_time
  not in the past when it changes, after start_time): a positive POST or PUT of a geofence gets
  an expiry_time a day ahead and a start_time of 0 where it gives them (GeofenceInputTests
  checks those 400s).
"""

import os
import time

import schemathesis

import setup as contract


def holds_nul(value):
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(holds_nul(key) or holds_nul(member) for key, member in value.items())
    if isinstance(value, list):
        return any(holds_nul(item) for item in value)
    return False


def has_empty_quiet_time(value):
    """Whether a `quiet_time` member anywhere in `value` starts when it ends."""
    if isinstance(value, dict):
        quiet = value.get("quiet_time")
        if isinstance(quiet, dict) and "start" in quiet and quiet.get("start") == quiet.get("end"):
            return True
        return any(has_empty_quiet_time(member) for member in value.values())
    if isinstance(value, list):
        return any(has_empty_quiet_time(item) for item in value)
    return False


def positive(case):
    return case.meta is not None and case.meta.generation.mode.is_positive


@schemathesis.hook
def filter_case(context, case):
    return not (positive(case) and (holds_nul(case.body) or holds_nul(case.query) or has_empty_quiet_time(case.body)))


def credentials(kind):
    keys = contract.read_keys(os.environ["HERALD_CONTRACT_KEY_DIR"])
    closed = contract.CLOSED
    return {
        "ios": {"p8": keys["p8"], "key_id": "ABC123DEFG", "team_id": "DEF123GHIJ", "topic": "com.example.contract",
                "endpoint": f"https://{closed}"},
        "android": {"service_account": {
            "type": "service_account", "project_id": "herald-contract", "private_key_id": "contract",
            "private_key": keys["rsa"], "client_email": "contract@herald-contract.iam.gserviceaccount.com",
            "token_uri": f"http://{closed}/token"}},
        "web": {"subject": "mailto:ops@example.com"},
        "windows": {"client_id": "contract-client", "client_secret": "contract-secret"},
    }[kind]


GEOFENCE_WRITES = ("POST /v1/geofence", "PUT /v1/geofence/{geofence_id}")


@schemathesis.hook
def map_case(context, case):
    if not positive(case) or not isinstance(case.body, dict):
        return case
    label = case.operation.label
    if label == "POST /admin/v1/apps/{app}/platforms" and case.body.get("type") in ("ios", "android", "web", "windows"):
        case.body = {**case.body, "credentials": credentials(case.body["type"])}
    elif label == "PUT /admin/v1/apps/{app}/schedules/{schedule_id}":
        body = {key: value for key, value in case.body.items() if key not in ("scheduleAt", "scheduleLocal", "schedule")}
        body["scheduleIn"] = 3600
        case.body = body
    elif label in GEOFENCE_WRITES:
        body = dict(case.body)
        if body.get("expiry_time") is not None:
            body["expiry_time"] = int(time.time() * 1000) + 86_400_000
        if body.get("start_time") is not None:
            body["start_time"] = 0
        case.body = body
    return case
