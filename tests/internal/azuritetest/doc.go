// Package azuritetest runs Azurite, Microsoft's Azure Storage emulator, on
// loopback for tests.
//
// [Start] finds the azurite-blob command (from the npm package azurite: npm
// install -g azurite), starts it on 127.0.0.1 on a free port with its
// workspace in a temporary folder, telemetry disabled, and waits until it
// answers; the test's cleanup stops it by its process ID. Without the
// command the test is skipped, unless LAKEGC_REQUIRE_AZURITE=1 (as in CI),
// when it fails. LAKEGC_AZURITE_BLOB names the command when it is not on
// PATH.
//
// Requests go through a reverse proxy on loopback in front of Azurite,
// which counts deletes and batch requests ([Server.Counts]) and can answer
// the next deletes with Azure's 503 ServerBusy ([Server.Throttle]), which
// Azurite never sends. [Server.Bucket] opens a container through
// gocloud.dev/blob/azureblob with Azurite's well-known account and key, as a
// host opens an Azure container; its client does not retry, so that
// throttling reaches the code under test.
package azuritetest
