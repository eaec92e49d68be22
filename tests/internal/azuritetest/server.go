package azuritetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
)

// Account and Key are Azurite's default storage account and its key, the
// emulator's published development credentials.
const (
	Account = "devstoreaccount1"
	Key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Server is an Azurite process and the proxy in front of it.
type Server struct {
	proxy *httptest.Server
	cred  *container.SharedKeyCredential

	throttle atomic.Int64

	deletes, batches, throttled atomic.Int64
}

// Counts are the delete requests a server has answered.
type Counts struct {
	Deletes   int64 // Delete Blob requests (one blob each)
	Batches   int64 // Blob Batch requests
	Throttled int64 // answered 503 ServerBusy by Throttle
}

// Start starts Azurite and its proxy, and stops them when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := command()
	if err != nil {
		if os.Getenv("LAKEGC_REQUIRE_AZURITE") == "1" {
			t.Fatalf("LAKEGC_REQUIRE_AZURITE=1 but %v", err)
		}
		t.Skipf("azuritetest: %v (npm install -g azurite, or set LAKEGC_AZURITE_BLOB)", err)
	}
	addr, err := startAzurite(t, bin)
	if err != nil {
		t.Fatalf("azuritetest: %v", err)
	}
	s := &Server{}
	target := &url.URL{Scheme: "http", Host: addr}
	rp := httputil.NewSingleHostReverseProxy(target)
	s.proxy = httptest.NewServer(s.intercept(rp))
	t.Cleanup(s.proxy.Close)
	cred, err := container.NewSharedKeyCredential(Account, Key)
	if err != nil {
		t.Fatalf("azuritetest: %v", err)
	}
	s.cred = cred
	return s
}

// command finds the azurite-blob command.
func command() (string, error) {
	if p := os.Getenv("LAKEGC_AZURITE_BLOB"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("azurite-blob")
	if err != nil {
		return "", errors.New("azurite-blob not found on PATH")
	}
	return p, nil
}

// startAzurite starts Azurite on a free loopback port, waits until it
// accepts connections, and registers its stop. It returns host:port.
func startAzurite(t testing.TB, bin string) (string, error) {
	var lastErr error
	for range 3 { // the free port may be taken before Azurite listens
		port, err := freePort()
		if err != nil {
			return "", err
		}
		var out bytes.Buffer
		cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(port),
			"--location", t.TempDir(), "--silent", "--disableTelemetry", "--skipApiVersionCheck", "--loose")
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return "", fmt.Errorf("start %s: %w", bin, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() {
			// By its process ID (its group: node may spawn helpers).
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			}
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err := waitListening(addr, exited, 60*time.Second); err != nil {
			stop()
			lastErr = fmt.Errorf("azurite-blob on %s: %w; output:\n%s", addr, err, out.String())
			continue
		}
		t.Cleanup(stop)
		return addr, nil
	}
	return "", lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitListening(addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited before listening")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening after %v", timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Endpoint returns the proxy's URL, http://127.0.0.1:<port>: Azure's
// requests go to <Endpoint>/<Account>/<container>/<blob>, as
// namespace.WithAzureEndpoint sends them.
func (s *Server) Endpoint() string { return s.proxy.URL }

// ServiceURL returns the account's service URL, <Endpoint>/<Account>.
func (s *Server) ServiceURL() string { return s.proxy.URL + "/" + Account }

// SetEnv sets AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY to Azurite's for
// the rest of the test (t.Setenv), for azureblob's default URL opener, which
// reads them once per process. The test must not be parallel.
func (s *Server) SetEnv(t testing.TB) {
	t.Setenv("AZURE_STORAGE_ACCOUNT", Account)
	t.Setenv("AZURE_STORAGE_KEY", Key)
}

// Throttle makes the proxy answer the next n delete requests (Delete Blob or
// Blob Batch) with 503 ServerBusy, without passing them to Azurite.
func (s *Server) Throttle(n int) { s.throttle.Store(int64(n)) }

// Counts returns the delete requests answered so far.
func (s *Server) Counts() Counts {
	return Counts{Deletes: s.deletes.Load(), Batches: s.batches.Load(), Throttled: s.throttled.Load()}
}

// Container creates a container and returns a client for it that does not
// retry.
func (s *Server) Container(t testing.TB, name string) *container.Client {
	t.Helper()
	c, err := s.ContainerClient(name)
	if err != nil {
		t.Fatalf("azuritetest: %v", err)
	}
	if _, err := c.Create(context.Background(), nil); err != nil {
		t.Fatalf("azuritetest: create container %q: %v", name, err)
	}
	return c
}

// ContainerClient returns a client for a container of the account, signed
// with the account's key, that does not retry.
func (s *Server) ContainerClient(name string) (*container.Client, error) {
	u, err := url.JoinPath(s.ServiceURL(), name)
	if err != nil {
		return nil, err
	}
	return container.NewClientWithSharedKeyCredential(u, s.cred, &container.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}},
	})
}

// Bucket creates a container and opens it through azureblob. The bucket is
// closed when the test ends.
func (s *Server) Bucket(t testing.TB, name string) *blob.Bucket {
	t.Helper()
	b, err := azureblob.OpenBucket(context.Background(), s.Container(t, name), nil)
	if err != nil {
		t.Fatalf("azuritetest: open bucket %q: %v", name, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// URLOpener returns an azureblob URL opener whose clients sign with
// Azurite's key and do not retry, for a blob.URLMux; the URL says where to
// send requests (see namespace.WithAzureEndpoint).
func (s *Server) URLOpener() *azureblob.URLOpener {
	return &azureblob.URLOpener{
		MakeClient: func(svc azureblob.ServiceURL, name azureblob.ContainerName) (*container.Client, error) {
			u, err := url.JoinPath(string(svc), string(name))
			if err != nil {
				return nil, err
			}
			return container.NewClientWithSharedKeyCredential(u, s.cred, &container.ClientOptions{
				ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}},
			})
		},
		ServiceURLOptions: azureblob.ServiceURLOptions{AccountName: Account},
	}
}

// intercept counts delete requests and answers the throttled ones.
func (s *Server) intercept(next http.Handler) http.Handler {
	var mu sync.Mutex // orders the throttle decision with the count
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		batch := r.Method == http.MethodPost && r.URL.Query().Get("comp") == "batch"
		single := r.Method == http.MethodDelete && strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 2
		if !batch && !single {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		if batch {
			s.batches.Add(1)
		} else {
			s.deletes.Add(1)
		}
		throttled := s.throttle.Add(-1) >= 0
		mu.Unlock()
		if throttled {
			s.throttled.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			w.Header().Set("x-ms-error-code", "ServerBusy")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code>`+
				`<Message>The server is busy (injected by azuritetest.Throttle).</Message></Error>`)
			return
		}
		next.ServeHTTP(w, r)
	})
}
