package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"iter"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stats is what one timed phase cost, measured inside the process that ran
// it.
type stats struct {
	Phase string `json:"phase"`
	Round int    `json:"round"`
	Rows  int64  `json:"rows"` // what the phase reported: candidates written, or keys read
	// Wall, User and Sys are seconds: elapsed, and CPU of every thread of
	// the process (getrusage) over the phase.
	Wall float64 `json:"wall_s"`
	User float64 `json:"user_s"`
	Sys  float64 `json:"sys_s"`
	// RSSStart is the resident set before the phase; PeakRSS the highest
	// during it (VmHWM, reset before the phase when HWMReset, else the
	// process's peak since it started).
	RSSStart int64  `json:"rss_start"`
	PeakRSS  int64  `json:"peak_rss"`
	HWMReset bool   `json:"hwm_reset"`
	Load     string `json:"loadavg"` // /proc/loadavg after the phase
}

func (s stats) cpu() float64 { return s.User + s.Sys }

// measure runs the timed work of a phase.
func measure(phase string, run func() (int64, error)) (stats, error) {
	st := stats{Phase: phase}
	// Writing 5 to clear_refs resets the peak resident set (VmHWM) to the
	// current one (Linux 4.0 and later).
	st.HWMReset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	st.RSSStart = procStatus("VmRSS")
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		return st, err
	}
	start := time.Now()
	rows, err := run()
	st.Wall = time.Since(start).Seconds()
	if err2 := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err == nil {
		err = err2
	}
	st.PeakRSS = procStatus("VmHWM")
	st.Rows = rows
	st.User = seconds(after.Utime) - seconds(before.Utime)
	st.Sys = seconds(after.Stime) - seconds(before.Stime)
	st.Load = loadavg()
	return st, err
}

func seconds(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// procStatus returns a size field of /proc/self/status in bytes (0 if
// unknown).
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// digest reads a set of keys to its end and returns how many there are and
// the SHA-256 of the keys sorted, each followed by a newline. A key that
// comes twice is an error: a candidate set holds each key once.
func digest(seq iter.Seq2[string, error]) (int64, string, error) {
	var keys []string
	for k, err := range seq {
		if err != nil {
			return 0, "", err
		}
		keys = append(keys, k)
	}
	if !slices.IsSorted(keys) {
		slices.Sort(keys)
	}
	h := sha256.New()
	for i, k := range keys {
		if i > 0 && keys[i-1] == k {
			return 0, "", fmt.Errorf("duckbench: key %q comes twice", k)
		}
		h.Write([]byte(k))
		h.Write([]byte{'\n'})
	}
	return int64(len(keys)), hex.EncodeToString(h.Sum(nil)), nil
}
