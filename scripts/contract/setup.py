"""Creates the credentials the contract run needs, through Herald's admin API.

Usage: setup.py BASE_URL ROOT_TOKEN KEY_DIR

Two tenants, so that what schemathesis does with one set of credentials cannot wreck the others:
- the default tenant holds the application whose API key (appBasic) and Android platform secret
  (platformBasic) schemathesis uses;
- the tenant "contract-admin" holds a second application; schemathesis's admin token
  (adminBearer) is limited to that tenant, so it cannot regenerate or delete the first one's
  credentials.
Each application gets a platform of every type (iOS with a generated .p8, Android with a generated
service account, web, Windows) with devices registered on each; every provider endpoint points at
a closed loopback port, so nothing leaves the machine.

Prints shell assignments (HERALD_CONTRACT_*) for the schemathesis configuration.
"""

import base64
import json
import sys
import urllib.error
import urllib.request

CLOSED = "127.0.0.1:1"


def call(base, method, path, headers, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers={**headers, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            return json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        sys.exit(f"setup: {method} {path} answered {error.code}: {error.read().decode()[:300]}")


def basic(user, password):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def application(base, admin, name, tenant_id, keys):
    app = call(base, "POST", "/admin/v1/apps", admin, {"name": name, "tenant_id": tenant_id, "verify_custom_user_id": False})
    uuid = app["uuid"]
    service_account = {
        "type": "service_account", "project_id": "herald-contract", "private_key_id": "contract",
        "private_key": keys["rsa"], "client_email": "contract@herald-contract.iam.gserviceaccount.com",
        "token_uri": f"http://{CLOSED}/token",
    }
    platforms = {
        "ios": {"type": "ios", "credentials": {"p8": keys["p8"], "key_id": "ABC123DEFG", "team_id": "DEF123GHIJ",
                                               "topic": "com.example.contract", "endpoint": f"https://{CLOSED}"}},
        "android": {"type": "android", "credentials": {"service_account": service_account}},
        "web": {"type": "web", "credentials": {"subject": "mailto:ops@example.com"}},
        "windows": {"type": "windows", "credentials": {"client_id": "contract-client", "client_secret": "contract-secret"}},
    }
    tokens = {
        "ios": "ab" * 32,
        "android": "contract-android-token",
        "web": json.dumps({"endpoint": f"https://{CLOSED}/push/contract",
                           "keys": {"p256dh": keys["p256dh"], "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, separators=(",", ":")),
        "windows": "https://contract.notify.windows.com/?token=contract",
    }
    created = {}
    for kind, body in platforms.items():
        platform = call(base, "POST", f"/admin/v1/apps/{uuid}/platforms", admin, body)
        created[kind] = platform
        device = basic(platform["uuid"], platform["secret"])
        call(base, "POST", "/v1/registration", device,
             {"registration_token": tokens[kind], "os": kind, "device_alias": "contract", "tags": ["contract", kind]})
    return app, created


def read_keys(key_dir):
    """The throw-away keys scripts/lib/serve.sh's herald_throwaway_keys wrote."""
    return {name: open(f"{key_dir}/{name}").read().strip() + ("\n" if name != "p256dh" else "") for name in ("p8", "rsa", "p256dh")}


def main():
    base, root, key_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    keys = read_keys(key_dir)
    admin = {"Authorization": f"Bearer {root}"}
    tenants = call(base, "GET", "/admin/v1/tenants", admin)["items"]
    default = tenants[0]["id"]
    app, platforms = application(base, admin, "contract", default, keys)
    other = call(base, "POST", "/admin/v1/tenants", admin, {"name": "contract-admin"})
    application(base, admin, "contract-admin", other["id"], keys)
    token = call(base, "POST", f"/admin/v1/tenants/{other['id']}/tokens", admin, {"name": "schemathesis"})["token"]
    android = platforms["android"]
    print(f"export HERALD_CONTRACT_APP_UUID={app['uuid']}")
    print(f"export HERALD_CONTRACT_API_KEY={app['api_key']}")
    print(f"export HERALD_CONTRACT_PLATFORM_UUID={android['uuid']}")
    print(f"export HERALD_CONTRACT_PLATFORM_SECRET={android['secret']}")
    print(f"export HERALD_CONTRACT_ADMIN_TOKEN={token}")


if __name__ == "__main__":
    main()
