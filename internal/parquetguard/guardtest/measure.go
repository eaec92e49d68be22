package guardtest

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Usage is what running a function cost in memory.
type Usage struct {
	// Allocated is the bytes allocated (runtime.MemStats.TotalAlloc).
	Allocated uint64
	// PeakHeap is the largest heap seen, objects not yet collected
	// included, sampled every millisecond.
	PeakHeap uint64
}

// Measure runs f, after a garbage collection, and returns what it cost and
// its error. Nothing else should run meanwhile.
func Measure(f func() error) (Usage, error) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var peak uint64
	wg.Add(1)
	go func() {
		defer wg.Done()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	err := f()
	close(stop)
	wg.Wait()
	runtime.ReadMemStats(&after)
	return Usage{Allocated: after.TotalAlloc - before.TotalAlloc, PeakHeap: peak}, err
}

// Allocated runs f and returns the bytes it allocated and its error; it
// costs less than Measure, for fuzz targets.
func Allocated(f func() error) (uint64, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}
