import HeraldCore
import HeraldDelivery
import HeraldStore
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The version of this build.
package let heraldVersion = "0.1.0"

/// Builds the Herald server: opens the store (migrating it) and wires the routes.
///
/// `herald serve` and the tests both call this. `onServerRunning` is called with the listening
/// channel once the server accepts connections (its port, when 0 was asked for).
package func buildApplication(
    _ configuration: ServerConfiguration, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    var logger = Logger(label: "herald") { DeferredMetadataLogHandler(wrapping: StreamLogHandler.standardError(label: $0)) }
    logger.logLevel = configuration.logLevel
    let opened = try await Bootstrap.open(configuration, logger: logger)
    if let token = opened.generatedAdminToken {
        // Shown once, on the first start, so that the operator can use the admin API.
        writeOperatorLine(
            """
            Herald generated a root admin token (shown once; also saved to \(opened.adminTokenPath), mode 0600):
              \(token)
            """)
    }
    return buildApplication(configuration, store: opened.store, logger: logger, onServerRunning: onServerRunning)
}

/// Builds the server around an open store.
///
/// - Parameter clock: the wall clock of the API and the delivery workers (APNs provider tokens'
///   issue times, retries); tests that run several servers in one process move it by hand.
package func buildApplication(
    _ configuration: ServerConfiguration, store: Store, logger: Logger, clock: EpochClock = .system,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let observability = Observability(configuration.observability, expectedWorkers: configuration.delivery.workers)
    for warning in DashboardPages.warnings(vendorDirectory: configuration.dashboardAssets) { logger.warning("\(warning)") }
    let router = buildRouter(
        store: store, clock: clock, geofenceUpdates: configuration.geofenceUpdates, wnsTestHost: configuration.delivery.wnsAllowedTestHost,
        observability: observability, scheduling: configuration.scheduling, dashboardAssets: configuration.dashboardAssets,
        dashboardMapTiles: configuration.dashboardMapTiles, deviceImport: configuration.deviceImport,
        webhookPolicy: configuration.webhooks.addressPolicy)
    var services: [any Service] = [
        DatabaseService(database: store.database),
        DeliveryService(
            store: store, configuration: configuration.delivery, clock: clock, logger: logger, telemetry: observability.delivery),
        WebhookService(store: store, configuration: configuration.webhooks, clock: clock, logger: logger),
        AnalyticsRetentionService(store: store, configuration: configuration.analytics, clock: clock, logger: logger),
        TopicCleanupService(store: store, clock: clock, logger: logger),
        SchedulerService(
            store: store, configuration: configuration.scheduling, clock: clock, logger: logger, metrics: observability.delivery.metrics),
    ]
    if store.database.dialect == .postgres {
        // Other processes' work wakes this one's sleepers.
        services.append(WorkListenerService(work: store.work))
    }
    return Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "herald"),
        services: services,
        onServerRunning: onServerRunning,
        logger: logger)
}

/// The routes of the Pivotal-compatible API, the admin API and the dashboard.
///
/// - Parameter clock: the wall clock the API stamps and compares times by (tests move it by hand).
/// - Parameter geofenceUpdates: when geofence changes are pushed to devices.
/// - Parameter observability: metrics, activity logs and health state (see docs/OBSERVABILITY.md).
/// - Parameter scheduling: when a push for later is sent at once instead.
/// - Parameter dashboardAssets: where the dashboard reads Debian's browser libraries from.
/// - Parameter dashboardMapTiles: the tile server the dashboard's map draws on, if any.
/// - Parameter deviceImport: how large a device import may be.
/// - Parameter webhookPolicy: which webhook URLs may be registered.
package func buildRouter(
    store: Store, clock: EpochClock = .system, geofenceUpdates: GeofenceUpdatePolicy = GeofenceUpdatePolicy(),
    wnsTestHost: String? = nil, observability: Observability = Observability(),
    scheduling: SchedulingConfiguration = SchedulingConfiguration(), dashboardAssets: String? = "/usr/share/javascript",
    dashboardMapTiles: DashboardMapTiles? = nil, deviceImport: DeviceImportConfiguration = DeviceImportConfiguration(),
    webhookPolicy: WebhookAddressPolicy = WebhookAddressPolicy()
) -> Router<HeraldRequestContext> {
    let router = Router(context: HeraldRequestContext.self)
    router.add(middleware: RequestIDMiddleware())
    router.add(middleware: RequestLogMiddleware(metrics: observability.http))
    router.add(middleware: PathNormalizingMiddleware())
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: StorableQueryMiddleware())
    let auth = Authenticator(store: store)
    VersionController(heraldVersion: heraldVersion).addRoutes(to: router)
    OpenAPIController().addRoutes(to: router)
    RegistrationController(store: store, auth: auth, wnsTestHost: wnsTestHost).addRoutes(to: router)
    RegistrationsController(store: store, auth: auth).addRoutes(to: router)
    let pushScheduling = PushScheduling(store: store, configuration: scheduling)
    let pushes = PushController<HeraldRequestContext>(
        store: store, auth: auth, clock: clock, telemetry: observability.delivery, scheduling: pushScheduling)
    pushes.addRoutes(to: router)
    SchedulesController(auth: auth, scheduling: pushScheduling, clock: clock).addRoutes(to: router)
    ScheduleImportController<HeraldRequestContext>(store: store, auth: auth, clock: clock, scheduling: pushScheduling).addRoutes(to: router)
    DeliverySettingsController(store: store, auth: auth).addRoutes(to: router)
    DeviceBadgeController(store: store, auth: auth).addRoutes(to: router)
    DeviceQuietTimeController(store: store, auth: auth).addRoutes(to: router)
    WebhooksController(store: store, auth: auth, policy: webhookPolicy).addRoutes(to: router)
    TopicsController(store: store, auth: auth, clock: clock).addRoutes(to: router)
    CustomUserIDsController(store: store, auth: auth).addRoutes(to: router)
    let locations = Locations(store: store, updates: geofenceUpdates)
    GeofencePlacesController<Locations, HeraldRequestContext>(places: locations, auth: auth, path: "v1/locations", parameter: "location_id")
        .addRoutes(to: router)
    GeofencePlacesController<LocationGroups, HeraldRequestContext>(
        places: LocationGroups(store: store), auth: auth, path: "v1/location_groups", parameter: "location_group_id"
    ).addRoutes(to: router)
    GeofencesController(store: store, auth: auth, updates: geofenceUpdates).addRoutes(to: router)
    GeofenceSyncController(store: store, auth: auth).addRoutes(to: router)
    AnalyticsController(store: store, auth: auth, clock: clock).addRoutes(to: router)
    AdminController(store: store, auth: auth).addRoutes(to: router)
    DeviceTransferController(store: store, auth: auth, clock: clock, configuration: deviceImport, wnsTestHost: wnsTestHost).addRoutes(
        to: router)
    ImportSnapshotsController<HeraldRequestContext>(store: store, auth: auth).addRoutes(to: router)
    HealthController(store: store, observability: observability).addRoutes(to: router)
    MetricsController(store: store, auth: auth, observability: observability).addRoutes(to: router)
    ActivityLogController(
        store: store, auth: auth, activity: observability.activity, heartbeat: observability.configuration.streamHeartbeat
    )
    .addRoutes(to: router)
    DashboardController(
        store: store, auth: auth, pages: DashboardPages(vendorDirectory: dashboardAssets), sessions: DashboardSessions(clock: clock),
        throttle: SignInThrottle(clock: clock), pushes: pushes, locations: locations, activity: observability.activity, clock: clock,
        heartbeat: observability.configuration.streamHeartbeat, mapTiles: dashboardMapTiles
    ).addRoutes(to: router)
    // Last, so that it wraps only the not-found responder.
    router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes.map { ($0.path.description, $0.method) }))
    return router
}
