import HeraldCore
import Testing

@Suite struct InteractivePushTests {
    @Test(arguments: [
        (PlatformType.ios, "8.0", true), (.ios, "17.2.1", true), (.ios, "7.1.2", false), (.ios, "10", true),
        (.android, "4.1", true), (.android, "4.0.4", false), (.android, "14", true), (.android, "4", false),
        (.web, "120", false), (.windows, "10.0", false), (.ios, "", false), (.ios, "beta", false),
    ])
    func iOS8AndAndroid41AndLaterCanShowInteractiveNotifications(_ type: PlatformType, _ version: String, _ supported: Bool) {
        #expect(InteractivePush.isSupported(by: type, osVersion: version) == supported)
    }

    @Test func aDeviceThatDidNotSayItsVersionIsNotCounted() {
        #expect(!InteractivePush.isSupported(by: .ios, osVersion: nil))
    }
}
