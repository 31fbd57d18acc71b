"""Replays every curl example in README.md and docs/*.md against a live Herald and checks that
the server answers what the documentation says.

Usage: replay.py BASE_URL ROOT_TOKEN KEY_DIR WORK_DIR

For each fenced code block that runs curl, each command is run with bash, exactly as written,
after the placeholders a reader would fill in are filled in with real credentials (an app and a
platform of every type, created first through the admin API with scripts/contract/setup.py):
APP_UUID, API_KEY, PLATFORM_UUID, PLATFORM_SECRET (of the platform whose `os` the command
registers, iOS otherwise), RECEIPT_ID, and the shell variables the docs use ($HERALD, $APP,
$APP_UUID, $ADMIN, $ADMIN_TOKEN, $PLATFORM...). Example ids the docs made up (a schedule id, a webhook id, topic
ids, a device uuid) become the ones the earlier examples created. Lines that are not curl (shell
assignments and functions) run before each command of their block, as a reader would have run
them; `herald`/`swift run` lines and blocks that need a mock provider process are not curl
examples and are skipped.

What is checked, for each command:
- it succeeds (curl's exit status 0 and an HTTP 2xx), or answers the status the docs name
  (`# 204`);
- when the docs show the answer (`# → {...}`, `# {...}` or the lines after a `$ curl` prompt),
  the answer has the documented shape: the same JSON types, every documented key (exactly those
  keys unless the documented object ends with `…`), and arrays whose items have the documented
  item's shape. Strings are compared by type only, as the docs abbreviate them (`"b50e…"`).

Prints one line per checked command; exits 1 on any mismatch, listing them.
"""

import json
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "contract"))
import setup as contract  # noqa: E402

DOCUMENTS = ["README.md"] + sorted(f"docs/{name}" for name in os.listdir("docs") if name.endswith(".md"))
# Blocks that need something besides a server and curl (a mock provider's process, jq).
SKIPPED_BLOCK_MARKERS = ["herald-dev mock ", "| jq"]
# Made-up ids in the docs, and what they stand for.
EXAMPLE_SCHEDULE_ID = "3f9c0a61d2b7e845"
EXAMPLE_DEVICE_UUID = "9a0e5a5c-1c7e-4a43-9d1e-5d9ab6f5c2e1"
EXAMPLE_TOPIC_PATH = re.compile(r"/v2/topics/12\b")
EXAMPLE_TOPIC_IDS = "[3,7,8]"
EXAMPLE_WEBHOOK_ID = "5b1f2c3e-8d4a-4c6b-9e2f-7a1d3c5b9e04"


def code_blocks(path):
    """The fenced code blocks of a Markdown file: (first line number, lines), without those the
    docs mark `<!-- replay: skip (why) -->` on the line before (an answer only another server
    state gives)."""
    blocks, current, start, previous, skipped = [], None, 0, "", False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            if current is None:
                current, start, skipped = [], number + 1, previous.startswith("<!-- replay: skip")
            else:
                if not skipped:
                    blocks.append((start, current))
                current = None
        elif current is not None:
            current.append(line.rstrip("\n"))
        if line.strip():
            previous = line.strip()
    return blocks


def complete(text):
    """Whether `text` is a whole shell command (no open quote, no trailing backslash)."""
    if text.endswith("\\"):
        return False
    try:
        shlex.split(text, comments=True)
        return True
    except ValueError:
        return False


def runs_curl(text):
    """Whether the command itself runs curl (not merely a comment that names it)."""
    code = "\n".join(re.sub(r"(^|\s)#.*$", "", line) for line in text.split("\n"))
    return re.search(r"(?:^|[\s;|&(])curl\s", code) is not None


def commands(lines):
    """Splits a block into commands: (text, documented answer or None, documented status or None)."""
    result, index = [], 0
    while index < len(lines):
        line = lines[index]
        prompt = line.startswith("$ ")
        text = line[2:] if prompt else line
        index += 1
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        while not complete(text) and index < len(lines):
            text += "\n" + lines[index]
            index += 1
        # What the docs say it answers: an inline comment, the comment lines after it, or (after
        # a `$` prompt) the output lines up to the next prompt or blank line.
        answer = []
        inline = re.search(r"\s#\s*(?:→\s*)?(.*)$", text.split("\n")[-1])
        if inline and "curl" in text:
            answer.append(inline.group(1))
        if prompt:
            while index < len(lines) and not lines[index].startswith("$ "):
                answer.append(lines[index])
                index += 1
        else:
            while index < len(lines) and lines[index].lstrip().startswith("#"):
                comment = lines[index].lstrip()[1:].strip()
                index += 1
                if comment.startswith("→"):
                    comment = comment[1:].strip()
                answer.append(comment)
        result.append((text, answer))
    return result


def documented(answer):
    """The documented answer as (status, JSON value, or None when it shows no JSON)."""
    text = " ".join(part for part in answer if part).strip()
    status = None
    match = re.match(r"^(\d{3})\b", text)
    if match:
        status = int(match.group(1))
    start = min([i for i in (text.find("{"), text.find("[")) if i >= 0], default=-1)
    if start < 0:
        return status, None
    body = text[start:]
    # Cut at the end of the first balanced JSON value (prose may follow it).
    depth, end, in_string, escaped = 0, None, False, False
    for position, character in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif character == "\\":
                escaped = True
            elif character == '"':
                in_string = False
        elif character == '"':
            in_string = True
        elif character in "{[":
            depth += 1
        elif character in "}]":
            depth -= 1
            if depth == 0:
                end = position + 1
                break
    if end is None:
        return status, None
    body = body[:end]
    # `, …}` and `, …]`: the docs show only part of it.
    body = re.sub(r",\s*…\s*([}\]])", r', "…": "…"\1', body)
    try:
        return status, json.loads(body)
    except json.JSONDecodeError:
        return status, None


def kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def shape_errors(expected, actual, path="$"):
    """How `actual` departs from the shape of the documented `expected`."""
    if expected is None:
        return []  # A documented null stands for "absent or any value".
    if kind(expected) != kind(actual):
        return [f"{path}: the docs show {kind(expected)} {json.dumps(expected)[:60]}, the server answers {kind(actual)} {json.dumps(actual)[:60]}"]
    errors = []
    if isinstance(expected, dict):
        partial = expected.get("…") == "…"
        for key, value in expected.items():
            if key == "…":
                continue
            if key not in actual:
                errors.append(f"{path}: the docs show a key '{key}' the server does not answer")
            else:
                errors += shape_errors(value, actual[key], f"{path}.{key}")
        if not partial:
            extra = sorted(set(actual) - set(expected))
            if extra:
                errors.append(f"{path}: the server also answers {extra}, which the docs' complete object does not show")
    elif isinstance(expected, list) and expected and actual:
        # The documented item is an example: some item of the answer has its shape.
        items = [item for item in expected if item != "…"]
        if items:
            attempts = [shape_errors(items[0], item, f"{path}[{index}]") for index, item in enumerate(actual)]
            if all(attempts):
                errors += attempts[0]
    return errors


class Replay:
    def __init__(self, base, root, key_dir, work):
        self.base, self.root, self.work = base, root, work
        admin = {"Authorization": f"Bearer {root}"}
        tenants = contract.call(base, "GET", "/admin/v1/tenants", admin)["items"]
        self.app, self.platforms = contract.application(base, admin, "docs", tenants[0]["id"], contract.read_keys(key_dir))
        self.ids = {}
        self.failures = []
        self.checked = 0

    def environment(self):
        app, ios = self.app, self.platforms["ios"]
        variables = {
            "HERALD": self.base, "APP": f"{app['uuid']}:{app['api_key']}", "APP_UUID": app["uuid"], "API_KEY": app["api_key"],
            "ADMIN": f"Authorization: Bearer {self.root}", "ADMIN_TOKEN": self.root, "TOKEN": self.root,
            "PLATFORM": f"{ios['uuid']}:{ios['secret']}", "PLATFORM_UUID": ios["uuid"], "PLATFORM_SECRET": ios["secret"],
        }
        return {**os.environ, **variables}

    def platform_for(self, command):
        match = re.search(r'"os"\s*:\s*"([a-z0-9-]+)"', command)
        os_name = match.group(1) if match else "ios"
        return self.platforms[{"android-fcm": "android", "windows8": "windows"}.get(os_name, os_name)]

    def fill(self, text, platform):
        """The placeholders a reader would fill in."""
        text = text.replace("http://127.0.0.1:8080", self.base)
        for placeholder, value in (
            ("PLATFORM_UUID", platform["uuid"]), ("PLATFORM_SECRET", platform["secret"]),
            ("APP_UUID", self.app["uuid"]), ("API_KEY", self.app["api_key"]),
        ):
            text = re.sub(r"(?<![$\w])" + placeholder + r"\b", value, text)
            text = text.replace("$" + placeholder, value)
        if "receipt_id" in self.ids:
            text = text.replace("RECEIPT_ID", self.ids["receipt_id"])
        if "schedule_id" in self.ids:
            text = text.replace(EXAMPLE_SCHEDULE_ID, self.ids["schedule_id"])
        if "device_uuid" in self.ids:
            text = text.replace(EXAMPLE_DEVICE_UUID, self.ids["device_uuid"])
        if "topic_id" in self.ids:
            text = EXAMPLE_TOPIC_PATH.sub(f"/v2/topics/{self.ids['topic_id']}", text)
        if "webhook_id" in self.ids:
            text = text.replace(EXAMPLE_WEBHOOK_ID, self.ids["webhook_id"])
        if "topic_ids" in self.ids:
            text = text.replace(EXAMPLE_TOPIC_IDS, json.dumps(self.ids["topic_ids"], separators=(",", ":")))
        return text

    def remember(self, answer):
        """Ids later examples refer to."""
        if isinstance(answer, dict):
            for key in ("receipt_id", "schedule_id", "device_uuid"):
                if isinstance(answer.get(key), str):
                    self.ids[key] = answer[key]
            if isinstance(answer.get("id"), str) and str(answer.get("secret", "")).startswith("whsec_"):
                self.ids["webhook_id"] = answer["id"]
            if isinstance(answer.get("id"), int) and "name" in answer:
                self.ids["topic_id"] = answer["id"]
            topics = answer.get("topics")
            if isinstance(topics, list) and topics and all(isinstance(t, dict) and "id" in t for t in topics):
                self.ids["topic_ids"] = [t["id"] for t in topics][:3]

    def run_block(self, document, start, lines):
        block_text = "\n".join(lines)
        if "curl" not in block_text or any(marker in block_text for marker in SKIPPED_BLOCK_MARKERS):
            return
        prelude = []
        for text, answer in commands(lines):
            first = text.split()[0] if text.split() else ""
            if first in ("herald", "swift") or text.startswith("echo "):
                continue
            if not runs_curl(text):
                prelude.append(text)
                continue
            platform = self.platform_for(text)
            script = "\n".join(prelude + [text])
            script = self.fill(script, platform)
            # Each curl also writes its status; -s keeps progress out; streams are cut short.
            script = script.replace("curl ", "curl -s -w '\\n%{http_code}' --max-time 5 ", 1)
            self.check(document, start, text, answer, script)

    def check(self, document, start, text, answer, script):
        self.checked += 1
        where = f"{document} (block at line {start}): {text.splitlines()[0][:90]}"
        streaming = " -N " in text
        process = subprocess.run(
            ["bash", "-c", "set -e\n" + script], cwd=self.work, env=self.environment(), capture_output=True, text=True, timeout=60)
        output = process.stdout
        lines = output.rstrip("\n").split("\n")
        status_text = lines[-1] if lines else ""
        body = "\n".join(lines[:-1])
        if streaming and process.returncode == 28 and status_text == "200":  # curl's timeout cut the stream, as asked.
            print(f"ok    {where} (200, a stream, cut after 5 s)")
            return
        if process.returncode != 0 or not status_text.isdigit():
            self.failures.append(f"{where}\n  curl failed ({process.returncode}): {process.stderr.strip()[:300]} {output[:300]}")
            return
        status = int(status_text)
        expected_status, expected_body = documented(answer)
        if expected_status is not None and expected_status != status:
            self.failures.append(f"{where}\n  the docs say {expected_status}, the server answered {status}: {body[:300]}")
            return
        if expected_status is None and not 200 <= status < 300:
            self.failures.append(f"{where}\n  the server answered {status}: {body[:300]}")
            return
        try:
            actual = json.loads(body) if body.strip() else None
        except json.JSONDecodeError:
            actual = None
        self.remember(actual)
        if expected_body is not None:
            errors = shape_errors(expected_body, actual)
            if errors:
                self.failures.append(f"{where}\n  " + "\n  ".join(errors))
                return
            print(f"ok    {where} ({status}, documented answer matches)")
        else:
            print(f"ok    {where} ({status})")


def main():
    base, root, key_dir, work = sys.argv[1:5]
    replay = Replay(base, root, key_dir, work)
    for document in DOCUMENTS:
        for start, lines in code_blocks(document):
            replay.run_block(document, start, lines)
    if replay.failures:
        print(f"\n{len(replay.failures)} of {replay.checked} documented examples do not match the server:", file=sys.stderr)
        for failure in replay.failures:
            print("- " + failure, file=sys.stderr)
        sys.exit(1)
    print(f"{replay.checked} documented curl examples replayed; every answer matches the docs")


if __name__ == "__main__":
    main()
