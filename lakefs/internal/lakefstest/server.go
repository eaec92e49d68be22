package lakefstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The environment variables that choose the lakeFS of the tests.
const (
	// EnvEndpoint names a running lakeFS, e.g. "http://127.0.0.1:8000"; with
	// EnvAccessKeyID and EnvSecretAccessKey it wins over EnvBin.
	EnvEndpoint        = "LAKEFS_ENDPOINT"
	EnvAccessKeyID     = "LAKEFS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "LAKEFS_SECRET_ACCESS_KEY"
	// EnvNamespace is the storage namespace prefix for the repositories the
	// tests create on an external lakeFS, e.g. "s3://bucket/lakegc-tests"
	// (default "local://": the lakeFS's local blockstore).
	EnvNamespace = "LAKEFS_NAMESPACE"
	// EnvBlockstorePath is the local blockstore's folder of a running lakeFS
	// (blockstore.local.path), when it uses one; the history writes its linked
	// objects there, since that blockstore cannot pre-sign URLs.
	EnvBlockstorePath = "LAKEFS_BLOCKSTORE_PATH"
	// EnvBin names a lakeFS binary that Start runs on loopback.
	EnvBin = "LAKEFS_BIN"
)

// Server is a lakeFS the tests use.
type Server struct {
	// Endpoint is lakeFS's base URL without the API path, e.g. "http://127.0.0.1:41234".
	Endpoint        string
	AccessKeyID     string
	SecretAccessKey string
	// NamespacePrefix is where the tests' repositories go: "local://" on a
	// started lakeFS, or EnvNamespace's value.
	NamespacePrefix string
	// BlockstorePath is the root of the local blockstore of a lakeFS this
	// package started, or EnvBlockstorePath's value; empty otherwise.
	BlockstorePath string
	// External is true for a running lakeFS named by EnvEndpoint: the
	// repositories the tests create there get a random suffix.
	External bool
	// LogPath is the log file of a started lakeFS.
	LogPath string
	// ConfigPath is the configuration file of a started lakeFS.
	ConfigPath string

	http *http.Client
}

// Start returns the lakeFS named by the environment: a running one
// (EnvEndpoint, EnvAccessKeyID, EnvSecretAccessKey), or one it starts from
// EnvBin with StartBinary. Without either it skips the test and says why.
func Start(t testing.TB) *Server {
	t.Helper()
	endpoint, key, secret := os.Getenv(EnvEndpoint), os.Getenv(EnvAccessKeyID), os.Getenv(EnvSecretAccessKey)
	if endpoint != "" {
		if key == "" || secret == "" {
			t.Fatalf("lakefstest: %s is set but not %s and %s", EnvEndpoint, EnvAccessKeyID, EnvSecretAccessKey)
		}
		ns := os.Getenv(EnvNamespace)
		if ns == "" {
			ns = "local://"
		}
		s := &Server{Endpoint: strings.TrimRight(endpoint, "/"), AccessKeyID: key, SecretAccessKey: secret,
			NamespacePrefix: ns, BlockstorePath: os.Getenv(EnvBlockstorePath), External: true,
			http: &http.Client{Timeout: 5 * time.Minute}}
		s.waitHealthy(t, nil, 30*time.Second)
		return s
	}
	if bin := os.Getenv(EnvBin); bin != "" {
		return StartBinary(t, bin)
	}
	t.Skipf("no lakeFS: set %s=/path/to/lakefs to have the test start one on loopback, "+
		"or %s with %s and %s to use a running one", EnvBin, EnvEndpoint, EnvAccessKeyID, EnvSecretAccessKey)
	return nil
}

// StartBinary runs the lakeFS binary bin on a free loopback port, with a
// local blockstore and a local KV store in the test's temporary folders, sets
// it up through the API (POST /setup_lakefs) and stops it when the test ends.
// The configuration turns off everything that would leave loopback.
func StartBinary(t testing.TB, bin string) *Server {
	t.Helper()
	return startBinary(t, bin, nil)
}

// S3Blockstore is an S3-compatible server for StartBinaryS3: lakeFS reaches
// it at Endpoint, path-style, with a static key pair, and the tests'
// repositories go under NamespacePrefix ("s3://<bucket>/<path>").
type S3Blockstore struct {
	Endpoint, AccessKeyID, SecretAccessKey, NamespacePrefix string
}

// StartBinaryS3 runs the lakeFS binary bin as StartBinary does, but with its
// blockstore on an S3-compatible server (blockstore.type s3, its endpoint,
// force_path_style, static keys, no region discovery). The configuration
// file is at the Server's ConfigPath, for tests of tools that read it.
func StartBinaryS3(t testing.TB, bin string, s3 S3Blockstore) *Server {
	t.Helper()
	return startBinary(t, bin, &s3)
}

func startBinary(t testing.TB, bin string, s3 *S3Blockstore) *Server {
	t.Helper()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("lakefstest: %s: %v", EnvBin, err)
	}
	dir := t.TempDir()
	s := &Server{
		NamespacePrefix: "local://",
		BlockstorePath:  filepath.Join(dir, "blockstore"),
		LogPath:         filepath.Join(dir, "lakefs.log"),
		ConfigPath:      filepath.Join(dir, "lakefs.yaml"),
		http:            &http.Client{Timeout: 5 * time.Minute},
	}
	blockstore := fmt.Sprintf(localBlockstore, s.BlockstorePath)
	if s3 != nil {
		s.NamespacePrefix, s.BlockstorePath = s3.NamespacePrefix, ""
		blockstore = fmt.Sprintf(s3Blockstore, s3.Endpoint, s3.AccessKeyID, s3.SecretAccessKey)
	} else if err := os.MkdirAll(s.BlockstorePath, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := freeLoopbackAddr(t)
	s.Endpoint = "http://" + addr
	cfgPath := s.ConfigPath
	cfg := fmt.Sprintf(configTemplate, addr, filepath.Join(dir, "kv"), blockstore, randomHex(t), randomHex(t))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(s.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, "run", "--config", cfgPath)
	cmd.Dir = dir
	cmd.Env = loopbackEnv()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("lakefstest: start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { stop(t, cmd, exited) })
	s.waitHealthy(t, exited, 60*time.Second)
	s.setup(t)
	return s
}

// configTemplate is lakeFS's configuration: listen address, KV path, blockstore type and settings (localBlockstore or s3Blockstore), signing secret, auth secret. Statistics, the e-mail
// subscription, the latest-version check and the audit check are off and
// point at a closed loopback port besides; lakeFS's usage reporter cannot be
// turned off but only writes to the local KV store.
const configTemplate = `listen_address: "%s"
logging:
  format: text
  level: INFO
  output: "-"
database:
  type: local
  local:
    path: "%s"
blockstore:
%s
  signing:
    secret_key: "%s"
auth:
  encrypt:
    secret_key: "%s"
stats:
  enabled: false
  address: "http://127.0.0.1:9"
email_subscription:
  enabled: false
security:
  check_latest_version: false
  audit_check_url: "http://127.0.0.1:9/audit"
`

// localBlockstore is the blockstore section of a local blockstore: its path.
// Imports are enabled, for tests of files imported from the blockstore.
const localBlockstore = `  type: local
  local:
    path: "%s"
    import_enabled: true`

// s3Blockstore is the blockstore section of an S3-compatible server on
// loopback: endpoint, access key ID, secret access key.
const s3Blockstore = `  type: s3
  s3:
    endpoint: "%s"
    force_path_style: true
    discover_bucket_region: false
    region: us-east-1
    credentials:
      access_key_id: "%s"
      secret_access_key: "%s"`

// loopbackEnv is the environment of the started lakeFS: the test's, minus
// anything that would configure it (LAKEFS_*) or send its traffic through a
// proxy.
func loopbackEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		if strings.HasPrefix(upper, "LAKEFS_") || strings.HasSuffix(upper, "_PROXY") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "NO_PROXY=*")
}

func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("lakefstest: find a free port: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func randomHex(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// waitHealthy polls /api/v1/healthcheck until lakeFS answers 204, the
// process exits, or the timeout passes.
func (s *Server) waitHealthy(t testing.TB, exited <-chan error, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("lakefstest: lakeFS exited before it was healthy: %v\n%s", err, s.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint+"/api/v1/healthcheck", nil)
		res, err := s.http.Do(req)
		cancel()
		if err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusNoContent {
				return
			}
			err = fmt.Errorf("healthcheck: %s", res.Status)
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("lakefstest: lakeFS at %s not healthy after %v: %v\n%s", s.Endpoint, timeout, last, s.logTail())
}

// setup creates the admin user and its access key pair.
func (s *Server) setup(t testing.TB) {
	t.Helper()
	var creds struct {
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
	}
	s.Do(t, http.MethodPost, "/setup_lakefs", nil, map[string]any{"username": "lakegc-admin"}, http.StatusOK, &creds)
	if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		t.Fatal("lakefstest: setup_lakefs returned no key pair")
	}
	s.AccessKeyID, s.SecretAccessKey = creds.AccessKeyID, creds.SecretAccessKey
}

// stop ends lakeFS: SIGTERM, then SIGKILL after 15 s.
func stop(t testing.TB, cmd *exec.Cmd, exited <-chan error) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Log("lakefstest: lakeFS did not stop on SIGTERM; killed")
	}
}

// logTail returns the end of a started lakeFS's log.
func (s *Server) logTail() string {
	if s.LogPath == "" {
		return ""
	}
	b, err := os.ReadFile(s.LogPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	const keep = 4000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}
