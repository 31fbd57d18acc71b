"""Generates a Python client from Herald's OpenAPI document and uses it against a live server.

Usage: client.py OPENAPI_JSON WORK_DIR BASE_URL ROOT_TOKEN KEY_DIR

1. openapi-python-client (pinned in scripts/requirements-test.txt) generates a client into
   WORK_DIR; any warning it prints (an operation or schema it could not generate) fails the
   check, as does an operation of the document missing from the client.
2. With the generated client only (its models and its operations), as a backend developer would:
   creates an application and an iOS platform through the admin API (root token), registers a
   device with the platform's credentials, sends a push to it with the application's, and reads
   the push's status. Every answer is read back through the generated models.
The platform's APNs endpoint is a closed loopback port: nothing leaves the machine.
"""

import importlib
import json
import os
import subprocess
import sys

# How the generator is run: no formatter hooks (ruff is not a test tool here), and the NDJSON of
# the device export and import as bytes (the generator knows no NDJSON; a generated client
# passes the lines through).
CONFIG = """\
post_hooks: []
content_type_overrides:
  application/x-ndjson: application/octet-stream
"""


def generate(document, work):
    os.makedirs(work, exist_ok=True)
    config = os.path.join(work, "openapi-python-client.yml")
    with open(config, "w") as file:
        file.write(CONFIG)
    package = os.path.join(work, "herald_client")
    result = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "openapi-python-client"), "generate", "--path", document, "--meta", "none", "--output-path", package,
         "--config", config, "--overwrite"],
        capture_output=True, text=True)
    output = result.stdout + result.stderr
    if result.returncode != 0 or "warning" in output.lower():
        sys.exit(f"client: openapi-python-client did not generate a clean client (exit {result.returncode}):\n{output}")
    operations = set()
    spec = json.load(open(document))
    for item in spec["paths"].values():
        for method, operation in item.items():
            if method in ("get", "put", "post", "delete", "patch"):
                operations.add(snake(operation["operationId"]))
    generated = set()
    for root, _, files in os.walk(os.path.join(package, "api")):
        generated.update(name[:-3] for name in files if name.endswith(".py") and name != "__init__.py")
    missing = sorted(operations - generated)
    if missing:
        sys.exit(f"client: operations missing from the generated client: {missing}")
    return len(operations)


def snake(name):
    """openapi-python-client's module name of an operationId (sendPush -> send_push)."""
    out = ""
    for index, char in enumerate(name):
        if char.isupper() and index > 0 and (not name[index - 1].isupper() or (index + 1 < len(name) and name[index + 1].islower())):
            out += "_"
        out += char.lower()
    return out


def expect(response, status, what):
    if response.status_code != status:
        sys.exit(f"client: {what} answered {response.status_code}, not {status}: {response.content[:300]!r}")
    return response.parsed


def use(work, base, root_token, key_dir):
    sys.path.insert(0, work)
    client_module = importlib.import_module("herald_client")
    api = lambda name: importlib.import_module(f"herald_client.api.{name}")  # noqa: E731
    models = importlib.import_module("herald_client.models")
    import base64

    def basic(user, password):
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        return client_module.AuthenticatedClient(base_url=base, token=token, prefix="Basic", raise_on_unexpected_status=False)

    admin = client_module.AuthenticatedClient(base_url=base, token=root_token, raise_on_unexpected_status=False)
    application = expect(
        api("admin.create_application").sync_detailed(client=admin, body=models.ApplicationCreate(name="generated client")),
        201, "createApplication")
    assert isinstance(application, models.ApplicationWithKey), application

    p8 = open(os.path.join(key_dir, "p8")).read()
    credentials = models.CredentialsRequest(
        p8=p8, key_id="ABC123DEFG", team_id="DEF123GHIJ", topic="com.example.generated", endpoint="https://127.0.0.1:1")
    platform = expect(
        api("admin.create_platform").sync_detailed(
            application.uuid, client=admin,
            body=models.PlatformCreate(type_=models.PlatformCreateType.IOS, name="iOS", credentials=credentials)),
        201, "createPlatform")
    assert isinstance(platform, models.PlatformWithSecret), platform

    device_client = basic(str(platform.uuid), platform.secret)
    registration = expect(
        api("devices.register_device").sync_detailed(
            client=device_client,
            body=models.RegistrationRequest(registration_token="cd" * 32, device_alias="generated", tags=["generated"])),
        200, "registerDevice")
    assert isinstance(registration, models.Registration), registration

    backend = basic(str(application.uuid), application.api_key)
    message = models.PushMessage(body="Hello from a generated client")
    target = models.PushTarget(devices=[registration.device_uuid])
    accepted = expect(
        api("push.send_push").sync_detailed(client=backend, body=models.PushRequest(message=message, target=target)),
        200, "sendPush")
    assert isinstance(accepted, models.PushReceipt), accepted

    status = expect(api("push.get_push_status").sync_detailed(accepted.receipt_id, client=backend), 200, "getPushStatus")
    assert isinstance(status, models.PushStatus), status
    return accepted.receipt_id


def main():
    document, work, base, root_token, key_dir = sys.argv[1:6]
    operations = generate(document, work)
    receipt = use(work, base, root_token, key_dir)
    print(f"generated client: {operations} operations, no warnings; registered a device and sent push {receipt}")


if __name__ == "__main__":
    main()
