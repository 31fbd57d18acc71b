import HeraldDelivery
import HeraldStore
import Hummingbird
import NIOCore

/// `GET /metrics`: the Prometheus text exposition of the server's registry.
///
/// Guarded by a root admin token (`Authorization: Bearer …`, which Prometheus sends with
/// `authorization.credentials_file`), unless the server runs with `--metrics-public`. The
/// gauges that describe a state (queue, connections, workers) are read at each scrape.
struct MetricsController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    let observability: Observability

    func addRoutes(to router: Router<Context>) {
        router.get("metrics", use: metrics)
    }

    @Sendable func metrics(_ request: Request, context: Context) async throws -> Response {
        if !observability.configuration.metricsPublic {
            let scope = AdminScope(token: try await auth.admin(request), store: store)
            try scope.requireRoot()
        }
        await refreshGauges(context)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16_384)
        observability.registry.emit(into: &bytes)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// Reads the state gauges; a database that does not answer leaves the queue's last values.
    private func refreshGauges(_ context: Context) async {
        let metrics = observability.delivery.metrics
        for provider in ProviderConnections.providers {
            metrics.providerConnections(provider: provider, observability.delivery.connections.open(provider))
        }
        metrics.workersRunning(observability.delivery.workers.runningWorkers)
        do {
            let queue = try await store.pushes.queueStatus()
            metrics.queue(depth: queue.depth, oldestAge: .milliseconds(queue.oldestWait))
        } catch {
            context.logger.warning("could not read the queue for /metrics", metadata: ["error": "\(error)"])
        }
    }
}
