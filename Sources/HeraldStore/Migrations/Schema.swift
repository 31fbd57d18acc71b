/// Herald's schema, in order. Append new migrations; never edit one that has shipped.
package enum Schema {
    package static let migrations: [Migration] = [
        Migration(
            version: 1, name: "tenants, applications, platforms, devices",
            statements: [
                """
                CREATE TABLE tenants (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE,
                    created_at {int} NOT NULL
                )
                """,
                """
                CREATE TABLE admin_tokens (
                    id TEXT PRIMARY KEY,
                    tenant_id TEXT REFERENCES tenants(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    token_hash TEXT NOT NULL UNIQUE,
                    created_at {int} NOT NULL
                )
                """,
                """
                CREATE TABLE applications (
                    id TEXT PRIMARY KEY,
                    tenant_id TEXT NOT NULL REFERENCES tenants(id),
                    name TEXT NOT NULL,
                    description TEXT NOT NULL,
                    api_key_hash TEXT NOT NULL,
                    created_at {int} NOT NULL,
                    updated_at {int} NOT NULL
                )
                """,
                "CREATE INDEX applications_tenant ON applications (tenant_id, created_at)",
                """
                CREATE TABLE platforms (
                    id TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES applications(id),
                    name TEXT NOT NULL,
                    type TEXT NOT NULL,
                    secret_hash TEXT NOT NULL,
                    secret_sealed {blob} NOT NULL,
                    credentials_sealed {blob},
                    credentials_summary TEXT,
                    credentials_status TEXT NOT NULL,
                    created_at {int} NOT NULL,
                    updated_at {int} NOT NULL
                )
                """,
                "CREATE INDEX platforms_app ON platforms (app_id, created_at)",
                """
                CREATE TABLE devices (
                    id {id},
                    uuid TEXT NOT NULL UNIQUE,
                    app_id TEXT NOT NULL REFERENCES applications(id),
                    platform_id TEXT NOT NULL REFERENCES platforms(id),
                    platform_type TEXT NOT NULL,
                    token TEXT NOT NULL,
                    os TEXT NOT NULL,
                    os_version TEXT,
                    device_alias TEXT,
                    device_model TEXT,
                    device_manufacturer TEXT,
                    custom_user_id TEXT,
                    active {int} NOT NULL,
                    created_at {int} NOT NULL,
                    updated_at {int} NOT NULL,
                    UNIQUE (platform_id, token)
                )
                """,
                "CREATE INDEX devices_app ON devices (app_id, id)",
                "CREATE INDEX devices_app_custom_user ON devices (app_id, custom_user_id)",
                """
                CREATE TABLE device_tags (
                    device_id {int} NOT NULL,
                    app_id TEXT NOT NULL,
                    tag TEXT NOT NULL,
                    PRIMARY KEY (device_id, tag)
                )
                """,
                "CREATE INDEX device_tags_app_tag ON device_tags (app_id, tag, device_id)",
            ]),
        Migration(
            version: 2, name: "pushes and their delivery jobs",
            statements: [
                """
                CREATE TABLE pushes (
                    id TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES applications(id),
                    request TEXT NOT NULL,
                    status TEXT NOT NULL,
                    created_at {int} NOT NULL,
                    expires_at {int},
                    targeted {int} NOT NULL DEFAULT 0,
                    delivered {int} NOT NULL DEFAULT 0,
                    failed {int} NOT NULL DEFAULT 0,
                    invalid_tokens {int} NOT NULL DEFAULT 0,
                    expired {int} NOT NULL DEFAULT 0,
                    skipped {int} NOT NULL DEFAULT 0
                )
                """,
                "CREATE INDEX pushes_app ON pushes (app_id, created_at)",
                """
                CREATE TABLE push_failures (
                    push_id TEXT NOT NULL REFERENCES pushes(id),
                    reason TEXT NOT NULL,
                    count {int} NOT NULL,
                    PRIMARY KEY (push_id, reason)
                )
                """,
                """
                CREATE TABLE push_jobs (
                    id {id},
                    push_id TEXT NOT NULL REFERENCES pushes(id),
                    kind TEXT NOT NULL,
                    cursor {int} NOT NULL,
                    device_ids TEXT NOT NULL,
                    attempt {int} NOT NULL,
                    state TEXT NOT NULL,
                    available_at {int} NOT NULL,
                    lease_until {int} NOT NULL,
                    created_at {int} NOT NULL
                )
                """,
                "CREATE INDEX push_jobs_due ON push_jobs (state, available_at, id)",
            ]),
        Migration(
            version: 3, name: "push job claims",
            statements: [
                // Counts the claims of a job: a worker whose lease ran out and was taken over can no
                // longer renew, advance, complete or release it.
                "ALTER TABLE push_jobs ADD COLUMN claim {int} NOT NULL DEFAULT 0"
            ]),
        Migration(
            version: 4, name: "locations, location groups, geofences, analytics",
            statements: [
                """
                CREATE TABLE locations (
                    id {id},
                    app_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    latitude DOUBLE PRECISION NOT NULL,
                    longitude DOUBLE PRECISION NOT NULL,
                    radius DOUBLE PRECISION NOT NULL,
                    created_at {int} NOT NULL,
                    updated_at {int} NOT NULL
                )
                """,
                "CREATE INDEX locations_app ON locations (app_id, id)",
                """
                CREATE TABLE location_groups (
                    id {id},
                    app_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    description TEXT NOT NULL,
                    created_at {int} NOT NULL,
                    updated_at {int} NOT NULL
                )
                """,
                "CREATE INDEX location_groups_app ON location_groups (app_id, id)",
                """
                CREATE TABLE location_group_members (
                    group_id {int} NOT NULL REFERENCES location_groups(id) ON DELETE CASCADE,
                    location_id {int} NOT NULL REFERENCES locations(id) ON DELETE CASCADE,
                    position {int} NOT NULL,
                    PRIMARY KEY (group_id, location_id)
                )
                """,
                "CREATE INDEX location_group_members_location ON location_group_members (location_id)",
                """
                CREATE TABLE geofences (
                    id {id},
                    app_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                    platform TEXT NOT NULL,
                    trigger_type TEXT NOT NULL,
                    start_time {int} NOT NULL,
                    expiry_time {int} NOT NULL,
                    data TEXT NOT NULL,
                    created_at {int} NOT NULL,
                    updated_at {int} NOT NULL,
                    deleted_at {int}
                )
                """,
                "CREATE INDEX geofences_app_updated ON geofences (app_id, updated_at)",
                """
                CREATE TABLE geofence_locations (
                    geofence_id {int} NOT NULL REFERENCES geofences(id) ON DELETE CASCADE,
                    location_id {int} NOT NULL REFERENCES locations(id) ON DELETE CASCADE,
                    position {int} NOT NULL,
                    PRIMARY KEY (geofence_id, location_id)
                )
                """,
                "CREATE INDEX geofence_locations_location ON geofence_locations (location_id)",
                """
                CREATE TABLE geofence_tags (
                    geofence_id {int} NOT NULL REFERENCES geofences(id) ON DELETE CASCADE,
                    tag TEXT NOT NULL,
                    PRIMARY KEY (geofence_id, tag)
                )
                """,
                """
                CREATE TABLE geofence_update_pushes (
                    app_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                    slot {int} NOT NULL,
                    push_id TEXT NOT NULL REFERENCES pushes(id) ON DELETE CASCADE,
                    first_change_at {int} NOT NULL,
                    platforms TEXT NOT NULL,
                    topics TEXT NOT NULL,
                    everyone {int} NOT NULL,
                    PRIMARY KEY (app_id, slot)
                )
                """,
                """
                CREATE TABLE analytics_events (
                    id {id},
                    app_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                    platform_id TEXT NOT NULL,
                    event_type TEXT NOT NULL,
                    event_time {int} NOT NULL,
                    received_at {int} NOT NULL,
                    receipt_id TEXT,
                    device_uuid TEXT,
                    geofence_id TEXT,
                    location_id TEXT,
                    sdk_version TEXT,
                    platform_type TEXT
                )
                """,
                "CREATE INDEX analytics_events_received ON analytics_events (received_at)",
                """
                CREATE TABLE analytics_hourly (
                    app_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                    push_id TEXT NOT NULL,
                    geofence_id {int} NOT NULL,
                    event_type TEXT NOT NULL,
                    hour {int} NOT NULL,
                    count {int} NOT NULL,
                    PRIMARY KEY (app_id, push_id, geofence_id, event_type, hour)
                )
                """,
                "CREATE INDEX analytics_hourly_app_hour ON analytics_hourly (app_id, hour)",
                "CREATE INDEX analytics_hourly_geofence ON analytics_hourly (app_id, geofence_id)",
            ]),
        Migration(
            version: 5, name: "per-app receiptId switch",
            statements: [
                "ALTER TABLE applications ADD COLUMN include_receipt_id {int} NOT NULL DEFAULT 1"
            ]),
        Migration(
            version: 6, name: "topics, signed custom user ids",
            statements: [
                // A topic is a name devices subscribe to (their tags, still in device_tags); the row
                // holds its id and expiry. An expired row stays until its subscriptions are removed.
                """
                CREATE TABLE topics (
                    id {id},
                    app_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    created_at {int} NOT NULL,
                    expires_at {int},
                    UNIQUE (app_id, name)
                )
                """,
                "CREATE INDEX topics_expires ON topics (expires_at)",
                // Every tag in use becomes a topic that never expires, dated by its first subscriber.
                """
                INSERT INTO topics (app_id, name, created_at)
                SELECT t.app_id, t.tag, MIN(d.created_at) FROM device_tags t JOIN devices d ON d.id = t.device_id
                GROUP BY t.app_id, t.tag ORDER BY t.app_id, t.tag
                """,
                // New applications verify signed custom user ids; existing ones keep accepting plain
                // ids, as their devices do today, until an operator turns verification on.
                "ALTER TABLE applications ADD COLUMN verify_custom_user_id {int} NOT NULL DEFAULT 1",
                "UPDATE applications SET verify_custom_user_id = 0",
            ]),
        // MARK: Scheduled pushes
        Migration(
            version: 7, name: "scheduled pushes, local-time delivery, send rates",
            statements: [
                // One row per `schedule_id`: the push as accepted (normalised). `state`: scheduled or
                // cancelled; whether it has fired is in its slots.
                """
                CREATE TABLE push_schedules (
                    id TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES applications(id),
                    request TEXT NOT NULL,
                    expires_at {int},
                    local_time TEXT,
                    state TEXT NOT NULL,
                    created_at {int} NOT NULL,
                    updated_at {int} NOT NULL
                )
                """,
                "CREATE INDEX push_schedules_app ON push_schedules (app_id, state, created_at)",
                // When a schedule fires: one slot, or one per group of time zones for `scheduleLocal`.
                // `time_zones`: NULL for an ordinary schedule, else the zones (comma-separated) whose
                // devices this slot reaches; '' in the list stands for devices without a zone.
                """
                CREATE TABLE push_schedule_slots (
                    id {id},
                    schedule_id TEXT NOT NULL REFERENCES push_schedules(id) ON DELETE CASCADE,
                    due_at {int} NOT NULL,
                    time_zones TEXT,
                    state TEXT NOT NULL,
                    push_id TEXT,
                    fired_at {int}
                )
                """,
                "CREATE INDEX push_schedule_slots_due ON push_schedule_slots (state, due_at)",
                "CREATE INDEX push_schedule_slots_schedule ON push_schedule_slots (schedule_id)",
                // A local-time push reaches only devices whose effective zone is listed here.
                """
                CREATE TABLE push_time_zones (
                    push_id TEXT NOT NULL REFERENCES pushes(id) ON DELETE CASCADE,
                    time_zone TEXT NOT NULL,
                    PRIMARY KEY (push_id, time_zone)
                )
                """,
                // A throttled push: its rate (devices a second), and when its next batch may start
                // sending (one batch of at most the rate a second, whichever worker sends it).
                """
                CREATE TABLE push_rates (
                    push_id TEXT PRIMARY KEY REFERENCES pushes(id) ON DELETE CASCADE,
                    per_second {int} NOT NULL,
                    next_at {int} NOT NULL DEFAULT 0
                )
                """,
                "ALTER TABLE devices ADD COLUMN time_zone TEXT",
                // App settings of this feature (admin API `/admin/v1/apps/:app/delivery`).
                """
                CREATE TABLE app_delivery_settings (
                    app_id TEXT PRIMARY KEY REFERENCES applications(id) ON DELETE CASCADE,
                    default_time_zone TEXT NOT NULL,
                    rate_per_second {int}
                )
                """,
            ]),
        // MARK: Job lookups by push
        Migration(
            version: 8, name: "push jobs indexed by push",
            statements: [
                // Finished jobs stay; without this index, each batch's "is the push done?" and a
                // throttled push's last batch read every job of every push ever sent.
                "CREATE INDEX push_jobs_push ON push_jobs (push_id, state)"
            ]),
        // MARK: Android data messages
        Migration(
            version: 9, name: "platforms choose whether FCM messages carry a notification block",
            statements: [
                // New Android platforms send data messages, which the PCF Android SDK needs; the
                // platforms that exist keep the notification block they had, until an operator
                // turns it off (docs/PLATFORMS.md).
                "ALTER TABLE platforms ADD COLUMN fcm_notification {int} NOT NULL DEFAULT 0",
                "UPDATE platforms SET fcm_notification = 1 WHERE type = 'android'",
            ]),
        // MARK: One APNs provider token per platform, for every process
        Migration(
            version: 10, name: "the APNs provider token a platform's processes share",
            statements: [
                // Apple refuses a key's token changed more often than every 20 minutes; the processes
                // sending for a platform keep one here, sealed (a bearer credential), and renew it
                // under this row's lock (docs/architecture-history.md, "APNs provider tokens").
                // `token_sealed` is NULL until the first token: the row exists to be locked.
                """
                CREATE TABLE apns_provider_tokens (
                    platform_id TEXT PRIMARY KEY REFERENCES platforms(id) ON DELETE CASCADE,
                    key_fingerprint TEXT NOT NULL,
                    token_sealed {blob},
                    issued_at {int} NOT NULL,
                    updated_at {int} NOT NULL
                )
                """
            ]),
        // MARK: Delivery webhooks
        Migration(
            version: 11, name: "webhook endpoints and their deliveries",
            statements: [
                // `events`: the event types it receives, comma-separated with a comma at each end
                // (`,push.done,device.deactivated,`), so that one LIKE finds an event's endpoints.
                // `secret_sealed`: its signing secret, sealed (the signature needs the secret itself).
                """
                CREATE TABLE webhook_endpoints (
                    id TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                    url TEXT NOT NULL,
                    events TEXT NOT NULL,
                    secret_sealed {blob} NOT NULL,
                    created_at {int} NOT NULL
                )
                """,
                "CREATE INDEX webhook_endpoints_app ON webhook_endpoints (app_id, created_at)",
                // One row per event and endpoint, queued in the transaction that caused the event;
                // leased like push_jobs. `state`: ready, claimed, delivered or failed (given up after
                // the retry window). `last_*`: the latest attempt's answer, for the admin API.
                """
                CREATE TABLE webhook_deliveries (
                    id {id},
                    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
                    event_id TEXT NOT NULL,
                    event_type TEXT NOT NULL,
                    body TEXT NOT NULL,
                    state TEXT NOT NULL,
                    attempts {int} NOT NULL DEFAULT 0,
                    available_at {int} NOT NULL,
                    lease_until {int} NOT NULL DEFAULT 0,
                    claim {int} NOT NULL DEFAULT 0,
                    created_at {int} NOT NULL,
                    last_attempt_at {int},
                    last_status {int},
                    last_error TEXT,
                    last_excerpt TEXT,
                    UNIQUE (endpoint_id, event_id)
                )
                """,
                "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, available_at)",
                "CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id)",
            ]),
        // MARK: Autobadge
        Migration(
            version: 12, name: "iOS badge counts, and the number each autobadge push showed",
            statements: [
                // The number the device's app icon shows, as Herald last sent it or the app reset it.
                "ALTER TABLE devices ADD COLUMN badge {int} NOT NULL DEFAULT 0",
                // For a push with a relative badge (`"+1"`): the number each device was sent, written
                // in the transaction that changed the device's count, so that a retried or redelivered
                // batch sends the same number and counts it once. Removed when the push is done; no
                // key to devices, so that deleting a device does not look through this table.
                """
                CREATE TABLE push_badges (
                    push_id TEXT NOT NULL REFERENCES pushes(id) ON DELETE CASCADE,
                    device_id {int} NOT NULL,
                    badge {int} NOT NULL,
                    PRIMARY KEY (push_id, device_id)
                )
                """,
            ]),
        // MARK: Quiet time
        Migration(
            version: 13, name: "devices' and apps' quiet times, and the batches a quiet time holds",
            statements: [
                // `HH:MM-HH:MM` in the device's time zone (`QuietTime.stored`); NULL: the app's default.
                "ALTER TABLE devices ADD COLUMN quiet_time TEXT",
                "ALTER TABLE app_delivery_settings ADD COLUMN quiet_time TEXT",
                // 1 for a batch held until its devices' quiet time ends (`"quiet_time": "hold"`): the
                // receipt shows its devices as pending, due at its `available_at`.
                "ALTER TABLE push_jobs ADD COLUMN quiet {int} NOT NULL DEFAULT 0",
            ]),
        // MARK: Recurring schedules
        Migration(
            version: 14, name: "recurring schedules",
            statements: [
                // A recurring schedule is one push_schedules row with its rule (`cron` in
                // `cron_time_zone`, ended by `until_at` or after `max_count` pushes) and `next_at`,
                // the occurrence still to fire: firing it and moving `next_at` on happen in one
                // transaction under the row's lock, so the update is the claim. `state` adds paused
                // and ended. Its occurrences, fired or skipped, are push_schedule_slots rows.
                "ALTER TABLE push_schedules ADD COLUMN cron TEXT",
                "ALTER TABLE push_schedules ADD COLUMN cron_time_zone TEXT",
                "ALTER TABLE push_schedules ADD COLUMN until_at {int}",
                "ALTER TABLE push_schedules ADD COLUMN max_count {int}",
                "ALTER TABLE push_schedules ADD COLUMN fired_count {int} NOT NULL DEFAULT 0",
                "ALTER TABLE push_schedules ADD COLUMN next_at {int}",
                "CREATE INDEX push_schedules_next ON push_schedules (state, next_at)",
                // A skipped occurrence (missed beyond the grace window): every occurrence from
                // `due_at` up to, not including, `skipped_until` was skipped.
                "ALTER TABLE push_schedule_slots ADD COLUMN skipped_until {int}",
            ]),
        // MARK: Recurring schedules in each device's local time
        Migration(
            version: 15, name: "recurring schedules in each device's local time",
            statements: [
                // `cron_local` 1: the cron names floating wall-clock times (no `cron_time_zone`);
                // `next_local` is the wall-clock time of the occurrence `next_at` begins (when the
                // earliest zone reaches it), `YYYY-MM-DDTHH:MM:SS`.
                "ALTER TABLE push_schedules ADD COLUMN cron_local {int} NOT NULL DEFAULT 0",
                "ALTER TABLE push_schedules ADD COLUMN next_local TEXT",
                // A fired local-time occurrence's wall-clock time.
                "ALTER TABLE push_schedule_slots ADD COLUMN local_time TEXT",
                // A fan-out job limited to these zones (comma-separated, '' for devices without one):
                // a local-time occurrence's push has one such job per group of zones, each due when
                // its zones reach the wall-clock time. NULL: the push's own zones (push_time_zones).
                "ALTER TABLE push_jobs ADD COLUMN time_zones TEXT",
            ]),
        // MARK: What a late local-time occurrence left out
        Migration(
            version: 16, name: "the zones a late local-time occurrence left out",
            statements: [
                // A fired local-time occurrence that began while no scheduler ran: how many zones it
                // had reached more than the grace window earlier, and so left out. NULL: none.
                "ALTER TABLE push_schedule_slots ADD COLUMN missed_time_zones {int}"
            ]),
        // MARK: Why a push's devices wait
        Migration(
            version: 17, name: "the latest cause of a provider not answering, per push",
            statements: [
                // The latest reason a provider could not be reached for the push's devices (TLS,
                // DNS, a refused connection, the proxy), and when (epoch ms): shown on the push's
                // status while its devices wait for their retries. NULL: none so far.
                "ALTER TABLE pushes ADD COLUMN last_error TEXT",
                "ALTER TABLE pushes ADD COLUMN last_error_at {int}",
            ]),
        // MARK: Import snapshots
        Migration(
            version: 18, name: "what each import last saw of each device at its source",
            statements: [
                // `herald import pivotal`: a device's fields and tags as the source (`source`, its
                // URL) showed them at the last run, so that the next one writes only what the source
                // changed since, over what the device changed on Herald.
                """
                CREATE TABLE import_snapshots (
                    app_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                    source TEXT NOT NULL,
                    device_uuid TEXT NOT NULL,
                    snapshot TEXT NOT NULL,
                    updated_at {int} NOT NULL,
                    PRIMARY KEY (app_id, source, device_uuid)
                )
                """
            ]),
    ]
}
