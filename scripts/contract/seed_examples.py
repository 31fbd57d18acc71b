"""Validates every JSON example of Pivotal's API documentation against Herald's OpenAPI document.

Usage: seed_examples.py OPENAPI_JSON SEED_TXT

The seed (shared/seeds/003_…txt, the Pivotal Push Notification Service 1.6 documentation) lost
its spaces in extraction but kept its JSON examples. Its HTTP API runs from the line "APIs"
(about line 1841) to the release notes (about line 3342). Every block there that opens with `{`
or `[` is an example; EXAMPLES below says, for each by its first line, which request or response
body of the document it shows (or which named schema, for the part of a body a block shows), and
how its placeholders read. A block found but not listed, or listed but not found, fails the
check, so no example is skipped silently.

How the seed writes placeholders, read the same way for every example:
- `# …` and `// …` are comments; `...` stands for elided members or items and is dropped;
- a type word (`integer`, `long`, `string`, `boolean`, `list`, `"object"`) stands for a value of
  that type; it becomes 1, 1700000000000, "text", true, [] and {};
- a JSON text the seed left broken (a missing comma or bracket) is repaired by REPAIRS, each with
  the reason.
Anything else is the seed's value as written. Prints one line per failing example (its line, what
it shows, the first error) and a count; exits 1 if any fails.
"""

import json
import re
import sys

import jsonschema

FIRST_LINE, LAST_LINE = 1841, 3342

# Device uuids where the seed writes "device_uuid1" or "111-222-333444".
UUID1, UUID2, UUID3 = ("0b2f7a0e-3f5c-4c55-9d0f-0d3c1c1c0a01", "0b2f7a0e-3f5c-4c55-9d0f-0d3c1c1c0a02",
                       "0b2f7a0e-3f5c-4c55-9d0f-0d3c1c1c0a03")

# A fragment: the seed shows part of a push; it is completed with this minimal one.
PUSH = {"message": {"body": "text"}, "target": {"platforms": ["ios"]}}

# line -> (what the block shows, where in the document: ("request", METHOD, PATH) or
# ("response", METHOD, PATH, STATUS) or ("schema", NAME), options)
# options: "complete" (merge into PUSH: the block elides the rest of the push with `...`),
# "omit" (members left out, with the seed's reason), "fill" (JSON pointer -> value for a
# placeholder that is no type word, with the reason).
EXAMPLES = {
    1871: ("the push's answer", ("response", "post", "/v1/push", "200"), {
        "strict": True,
        "omit": {"/schedule_id": "the seed: schedule_id only for a push for later, receipt_id only for one sent now"},
        "fill": {"/receipt_id": "8a3f1f1c-1f0e-4c3c-9a1e-1c7f0b4a2d11"}}),
    1927: ("target: devices", ("request", "post", "/v1/push"), {
        "complete": True,
        "fill": {"/target/devices": [UUID1, UUID2, UUID3]}}),
    1937: ("target: topics", ("request", "post", "/v1/push"), {"complete": True}),
    1945: ("target: iOS devices", ("request", "post", "/v1/push"), {"complete": True}),
    1953: ("target: Android devices on a topic", ("request", "post", "/v1/push"), {"complete": True}),
    1962: ("target: interactive-only devices", ("request", "post", "/v1/push"), {"complete": True}),
    1971: ("target: custom user ids", ("request", "post", "/v1/push"), {"complete": True}),
    1979: ("target: a custom user id and topics", ("request", "post", "/v1/push"), {"complete": True}),
    1988: ("target: custom user ids and topics", ("request", "post", "/v1/push"), {"complete": True}),
    2024: ("scheduleAt", ("request", "post", "/v1/push"), {"complete": True}),
    2030: ("scheduleIn", ("request", "post", "/v1/push"), {"complete": True}),
    2039: ("custom.ios, every field", ("schema", "PushCustom"), {}),
    2165: ("a push for later to a topic", ("request", "post", "/v1/push"), {}),
    2176: ("a push with custom fields for iOS and Android", ("request", "post", "/v1/push"), {}),
    2201: ("a push with an iOS category", ("request", "post", "/v1/push"), {"fill": {"/target/devices": [UUID1]}}),
    2227: ("a push with every option", ("request", "post", "/v1/push"), {
        "omit": {"/message/custom/bb10": "BlackBerry Push is retired: Herald refuses a bb10 block (400 platform_retired), as the document says"},
        "fill": {"/target/platforms": ["ios", "android"], "/target/devices": [UUID1, UUID2]}}),
    2288: ("a registration", ("response", "get", "/v1/registration/{device_uuid}", "200"), {
        "fill": {"/os": "ios", "/device_uuid": UUID1, "/active": True}}),
    2319: ("registering, every field", ("request", "post", "/v1/registration"), {
        "fill": {"/os": "ios", "/registration_token": "b50edac575bfba07dd019b28b2af7189a3ddda17c806ef14a9abbfd00533f67e"}}),
    2330: ("the registration's answer", ("response", "post", "/v1/registration", "200"), {
        "fill": {"/os": "ios", "/device_uuid": UUID1, "/active": True}}),
    2356: ("registering a device", ("request", "post", "/v1/registration"), {}),
    2374: ("updating, every field", ("request", "put", "/v1/registration/{device_uuid}"), {
        "fill": {"/registration_token": "b50edac575bfba07dd019b28b2af7189a3ddda17c806ef14a9abbfd00533f67e"}}),
    2388: ("updating a registration", ("request", "put", "/v1/registration/{device_uuid}"), {}),
    2424: ("a page of registrations", ("response", "get", "/v2/registrations", "200"), {
        "fill": {"/registrations/0/os": "ios", "/registrations/0/device_uuid": UUID1,
                 "/registrations/0/active": True}}),
    2466: ("a page of topics", ("response", "get", "/v2/topics", "200"), {}),
    2474: ("a topic", ("schema", "Topic"), {}),
    2485: ("creating a topic", ("request", "post", "/v2/topics"), {
        "omit": {"/timeToLive": "the seed: either expireAt or timeToLive, not both"}}),
    2491: ("the topic created", ("response", "post", "/v2/topics", "201"), {}),
    2508: ("creating topics", ("request", "post", "/v2/topics/batch"), {}),
    2513: ("a topic to create", ("schema", "TopicRequest"), {
        "omit": {"/expireAt": "the seed: either expireAt or timeToLive, not both"},
        "fill": {"/timeToLive": 3600}}),
    2521: ("the topics created", ("response", "post", "/v2/topics/batch", "201"), {}),
    2527: ("a topic", ("schema", "Topic"), {}),
    2537: ("deleting topics", ("request", "delete", "/v2/topics/batch"), {"fill": {"/topicIds": [1, 2]}}),
    2541: ("the topics deleted", ("response", "delete", "/v2/topics/batch", "200"), {}),
    2559: ("custom user ids", ("response", "get", "/v2/custom_user_ids", "200"), {}),
    2567: ("all custom user ids", ("response", "get", "/v2/custom_user_ids", "200"), {}),
    2580: ("custom user ids matching q", ("response", "get", "/v2/custom_user_ids", "200"), {}),
    2588: ("custom user ids matching q", ("response", "get", "/v2/custom_user_ids", "200"), {}),
    2595: ("registering under a custom user id", ("request", "post", "/v1/registration"), {
        "fill": {"/registration_token": "b50edac575bfba07dd019b28b2af7189a3ddda17c806ef14a9abbfd00533f67e"}}),
    2614: ("the schedules", ("response", "get", "/v1/schedules", "200"), {}),
    2674: ("a schedule", ("response", "get", "/v1/schedules/{schedule_id}", "200"), {}),
    2726: ("changing a schedule", ("request", "put", "/v1/schedules/{schedule_id}"), {
        "fill": {"/target/platforms": ["ios", "android"], "/target/platform": "all", "/target/devices": [UUID1, UUID2]}}),
    2744: ("the schedule changed", ("response", "put", "/v1/schedules/{schedule_id}", "200"), {}),
    2807: ("creating a geofence", ("request", "post", "/v1/geofence"), {
        "fill": {"/platform": "ios"}}),  # left empty in the seed; its data is an iOS notification
    2904: ("the geofence created", ("response", "post", "/v1/geofence", "201"), {}),
    2953: ("a page of geofences", ("response", "get", "/v1/geofence", "200"), {}),
    2992: ("geofence updates for a device", ("response", "get", "/v1/geofences", "200"), {}),
    3031: ("a geofence", ("response", "get", "/v1/geofence/{geofence_id}", "200"), {}),
    3056: ("changing a geofence", ("request", "put", "/v1/geofence/{geofence_id}"), {
        # `{"object":{"key":"value"}}` stands for an object; the data that replaces a geofence's
        # must hold what its platform's SDK reads, whichever platform is stored.
        "fill": {"/data": {"ios": {"alertBody": "text"}, "android": {"message": "text"}}}}),
    3066: ("the geofence changed", ("response", "put", "/v1/geofence/{geofence_id}", "200"), {}),
    3112: ("a page of locations", ("response", "get", "/v1/locations", "200"), {}),
    3136: ("a location", ("response", "get", "/v1/locations/{location_id}", "200"), {}),
    3150: ("creating a location", ("request", "post", "/v1/locations"), {}),
    3162: ("the location created", ("response", "post", "/v1/locations", "201"), {}),
    3176: ("changing a location", ("request", "put", "/v1/locations/{location_id}"), {}),
    3183: ("the location changed", ("response", "put", "/v1/locations/{location_id}", "200"), {}),
    3215: ("a page of location groups", ("response", "get", "/v1/location_groups", "200"), {}),
    3249: ("a location group", ("response", "get", "/v1/location_groups/{location_group_id}", "200"), {}),
    3272: ("creating a location group", ("request", "post", "/v1/location_groups"), {}),
    3284: ("the location group created", ("response", "post", "/v1/location_groups", "201"), {}),
    3307: ("changing a location group", ("request", "put", "/v1/location_groups/{location_group_id}"), {}),
    3315: ("the location group changed", ("response", "put", "/v1/location_groups/{location_group_id}", "200"), {}),
}

# line of the seed -> (text as printed, text as meant, why)
REPAIRS = {
    2438: ('"totalRegistrations": 1', '"totalRegistrations": 1,', "members without commas"),
    2439: ('"totalPages": 1', '"totalPages": 1,', "members without commas"),
    2440: ('"page": 1', '"page": 1,', "members without commas"),
    2437: ("]", "],", "members without commas"),
    3014: ("],", "]}],", "the geofence and its list are never closed"),
    3259: ('"rad": 100', '"rad": 100,', "a member without its comma"),
}

TYPE_WORDS = {"integer": "1", "long": "1700000000000", "string": '"text"', "boolean": "true", "list": "[]"}


# For answers: the members an example shows are checked, the members it leaves out are not missed.
ShownFieldsValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"required": lambda *_: ()})


def normalized_lines(path):
    text = open(path, encoding="utf-8").read()
    # The PDF's extraction left private-use characters where spaces were.
    return re.sub("[\ue000-\uf8ff]", " ", text).split("\n")


def strip_comment(line):
    """The line without a `#` or `//` comment (outside strings)."""
    quoted = False
    for index, char in enumerate(line):
        if char == '"' and (index == 0 or line[index - 1] != "\\"):
            quoted = not quoted
        elif not quoted and (char == "#" or line.startswith("//", index)):
            return line[:index].rstrip()
    return line.rstrip()


def blocks(lines):
    """(first line number, text) of each example between FIRST_LINE and LAST_LINE."""
    found, index = [], FIRST_LINE - 1
    while index < LAST_LINE:
        if lines[index].lstrip().startswith(("{", "[")):
            depth, text, end = 0, [], index
            while end < len(lines):
                line = lines[end]
                if not line.startswith("©"):  # a page footer inside the example
                    if end + 1 in REPAIRS:
                        printed, meant, _ = REPAIRS[end + 1]
                        assert printed in line, f"repair of line {end + 1}: {printed!r} not in {line!r}"
                        line = line.replace(printed, meant, 1)
                    line = strip_comment(line)
                    text.append(line)
                    depth += sum(line.count(c) for c in "{[") - sum(line.count(c) for c in "}]")
                    if depth <= 0:
                        break
                end += 1
            found.append((index + 1, "\n".join(text)))
            index = end + 1
        else:
            index += 1
    return found


def parse(text):
    text = re.sub(r",\s*\.\.\.", "", text)                  # `"a", ...` in a list
    text = re.sub(r"^\s*\.\.\.\s*$", "", text, flags=re.M)  # a line of `...`
    text = re.sub(r':\s*"object"', ": {}", text)            # "object": an object
    for word, value in TYPE_WORDS.items():
        text = re.sub(rf":\s*{word}(\s*[,}}\n])", rf": {value}\1", text)
    text = re.sub(r",(\s*[}\]])", r"\1", text)              # a comma before the end
    return json.loads(text)


def pointer_parts(pointer):
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]]


def apply(example, options):
    if options.get("complete"):
        example = {**PUSH, **example}
    for pointer in options.get("omit", {}):
        *parents, last = pointer_parts(pointer)
        node = example
        for part in parents:
            node = node[int(part) if isinstance(node, list) else part]
        del node[last]
    for pointer, value in options.get("fill", {}).items():
        *parents, last = pointer_parts(pointer)
        node = example
        for part in parents:
            node = node[int(part) if isinstance(node, list) else part]
        node[int(last) if isinstance(node, list) else last] = value
    return example


def schema_pointer(document, where):
    def escape(part):
        return part.replace("~", "~0").replace("/", "~1")
    if where[0] == "schema":
        if where[1] not in document["components"]["schemas"]:
            raise KeyError(f"the document has no schema {where[1]}")
        return f"#/components/schemas/{where[1]}"
    operation = document["paths"][where[2]][where[1]]
    if where[0] == "request":
        content = operation["requestBody"]["content"]
        return f"#/paths/{escape(where[2])}/{where[1]}/requestBody/content/application~1json/schema" if content else None
    response = operation["responses"][where[3]]
    if "$ref" in response:
        name = response["$ref"].split("/")[-1]
        return f"#/components/responses/{name}/content/application~1json/schema"
    return f"#/paths/{escape(where[2])}/{where[1]}/responses/{where[3]}/content/application~1json/schema"


def main():
    document_path, seed_path = sys.argv[1], sys.argv[2]
    document = json.load(open(document_path, encoding="utf-8"))
    found = dict(blocks(normalized_lines(seed_path)))
    unlisted = sorted(set(found) - set(EXAMPLES))
    missing = sorted(set(EXAMPLES) - set(found))
    if unlisted or missing:
        sys.exit(f"seed examples: blocks not in EXAMPLES: {unlisted}; EXAMPLES not found in the seed: {missing}")
    root = {key: value for key, value in document.items() if key != "paths"} | {"paths": document["paths"]}
    failures = 0
    for line, (what, where, options) in sorted(EXAMPLES.items()):
        try:
            example = apply(parse(found[line]), options)
        except (ValueError, KeyError, IndexError) as error:
            print(f"line {line} ({what}): not JSON as read: {error}")
            failures += 1
            continue
        try:
            schema = dict(root, **{"$ref": schema_pointer(document, where)})
        except KeyError as error:
            print(f"line {line} ({what}): {error}")
            failures += 1
            continue
        # An answer may hold more than Pivotal's example shows: what it shows must be right.
        shown_only = where[0] == "response" and not options.get("strict")
        validator = (ShownFieldsValidator if shown_only else jsonschema.Draft202012Validator)(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        error = jsonschema.exceptions.best_match(validator.iter_errors(example))
        if error is not None and "-v" in sys.argv:
            for each in validator.iter_errors(example):
                print(f"  line {line}: {list(each.absolute_path)}: {each.message[:200]}")
        if error is not None:
            location = "/" + "/".join(str(part) for part in error.absolute_path)
            shown = where[1] if where[0] == "schema" else " ".join([where[1].upper(), *where[2:]])
            print(f"line {line} ({what}, {shown}): "
                  f"at {location}: {error.message[:300]}")
            failures += 1
    print(f"seed examples: {len(EXAMPLES) - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
