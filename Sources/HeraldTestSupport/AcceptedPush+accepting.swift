import HeraldCore

import struct Foundation.Data
import class Foundation.JSONDecoder

extension AcceptedPush {
    /// The push `POST /v1/push` accepts for the body `json` at `now` (epoch ms), as it stores it;
    /// `asSchedule` keeps the request too, as a schedule does.
    package static func accepting(_ json: String, now: Int64 = 0, asSchedule: Bool = false) throws -> AcceptedPush {
        let push = try check(try JSONDecoder().decode(PushInput.self, from: Data(json.utf8)), now: now)
        return AcceptedPush(push, request: asSchedule ? try JSONDecoder().decode([String: JSONValue].self, from: Data(json.utf8)) : nil)
    }
}
