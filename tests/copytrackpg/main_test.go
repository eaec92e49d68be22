// Package copytrackpg tests copytrack/sqlstore against a real PostgreSQL
// server: the one at LAKEGC_POSTGRES_URL, or else a private one the tests
// start from the installed binaries (/usr/lib/postgresql/*/bin) on loopback,
// in a temporary directory removed at the end, as the postgres user when the
// tests run as root (PostgreSQL refuses to run as root). Without either the
// tests skip, unless LAKEGC_REQUIRE_POSTGRES=1 (as in CI), when they fail.
package copytrackpg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq"
)

var (
	db          *sql.DB
	unavailable string // why there is no server, when db is nil
	broken      bool   // a server should be there but is not: fail, never skip
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	url := os.Getenv("LAKEGC_POSTGRES_URL")
	var srv *server
	if url == "" {
		var err error
		srv, err = startServer()
		switch {
		case errors.Is(err, errNoBinaries):
			unavailable = "no PostgreSQL: set LAKEGC_POSTGRES_URL or install the postgresql package (initdb not found in /usr/lib/postgresql/*/bin)"
		case err != nil:
			unavailable, broken = "starting a private PostgreSQL server: "+err.Error(), true
		default:
			defer srv.stop()
			url = srv.url
		}
	}
	if url != "" {
		var err error
		wait := 5 * time.Second // a server given by the environment is up
		if srv != nil {
			wait = 30 * time.Second // ours may still be starting
		}
		if db, err = open(url, wait); err != nil {
			db, unavailable, broken = nil, fmt.Sprintf("connecting to %s: %v", url, err), true
		} else {
			defer db.Close()
		}
	}
	return m.Run()
}

// requireDB skips the test when there is no server, or fails it when the
// environment says one is required (as CI does) or when a server given or
// started does not answer.
func requireDB(tb testing.TB) *sql.DB {
	tb.Helper()
	if db != nil {
		return db
	}
	if broken {
		tb.Fatal(unavailable)
	}
	if os.Getenv("LAKEGC_REQUIRE_POSTGRES") == "1" {
		tb.Fatalf("LAKEGC_REQUIRE_POSTGRES=1 but %s", unavailable)
	}
	tb.Skip(unavailable)
	return nil
}

// open connects to url, retrying for up to wait.
func open(url string, wait time.Duration) (*sql.DB, error) {
	d, err := sql.Open("postgres", url)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = d.PingContext(ctx)
		cancel()
		if err == nil {
			return d, nil
		}
		if time.Now().After(deadline) {
			d.Close()
			return nil, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var errNoBinaries = errors.New("no PostgreSQL binaries")

// server is a private PostgreSQL server in a temporary directory.
type server struct {
	dir    string
	cmd    *exec.Cmd
	exited chan error // gets cmd.Wait's result
	url    string
}

func startServer() (*server, error) {
	initdbs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(initdbs) == 0 {
		return nil, errNoBinaries
	}
	sort.Strings(initdbs)
	bin := filepath.Dir(initdbs[len(initdbs)-1])
	dir, err := os.MkdirTemp("", "copytrackpg-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir}
	if err := s.start(bin); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *server) start(bin string) error {
	// PostgreSQL refuses to run as root: run it as the postgres user, in a
	// directory that user owns.
	var asUser []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root, and no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(s.dir, uid, gid); err != nil {
			return err
		}
		asUser = []string{"setpriv", "--reuid=" + u.Uid, "--regid=" + u.Gid, "--init-groups", "--"}
	}
	data := filepath.Join(s.dir, "data")
	logPath := filepath.Join(s.dir, "log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	command := func(name string, args ...string) *exec.Cmd {
		argv := append(append(asUser, filepath.Join(bin, name)), args...)
		c := exec.Command(argv[0], argv[1:]...)
		c.Stdout, c.Stderr = logFile, logFile
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return c
	}
	initdb := command("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	if err := initdb.Run(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, readLog(logPath))
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	s.cmd = command("postgres", "-D", data, "-k", s.dir, "-h", "127.0.0.1", "-p", strconv.Itoa(port),
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	s.url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	s.exited = make(chan error, 1)
	go func() { s.exited <- s.cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case err := <-s.exited:
			s.cmd = nil
			return fmt.Errorf("postgres exited: %v\n%s", err, readLog(logPath))
		case <-deadline:
			return fmt.Errorf("postgres not listening after 30s\n%s", readLog(logPath))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop shuts the server down (SIGINT: fast shutdown) and removes its directory.
func (s *server) stop() {
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
		}
	}
	os.RemoveAll(s.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
