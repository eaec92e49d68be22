package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/host"
)

// What a sweep's requests cost on each cloud, per the providers' published
// prices: the requests one sweep of n candidates sends with lakegc's
// deleters, and the price of each request class, in US dollars, read on
// 2026-12-01 (stored copies of the pages below, standard storage class,
// the providers' lowest regional rates; prices vary by region and tier):
//
//   - S3 (https://aws.amazon.com/s3/pricing/): DELETE and CANCEL requests are
//     free; package s3delete sends DeleteObjects, a POST of up to 1000 keys
//     (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html),
//     counted here at the PUT, COPY, POST, LIST class, $0.005 per 1,000
//     requests: an upper bound if AWS bills it as a DELETE.
//   - GCS (https://cloud.google.com/storage/pricing#operations-by-class):
//     storage.objects.delete (JSON API) and DELETE (XML API) are free
//     operations; package gcsdelete deletes one object per request.
//   - Azure (https://learn.microsoft.com/azure/storage/blobs/map-rest-apis-transaction-categories):
//     Delete Blob is of the "Free" operation type; package azdelete sends a
//     Blob Batch of up to 256 Delete Blob subrequests
//     (https://learn.microsoft.com/rest/api/storageservices/blob-batch),
//     each billed as its Delete Blob. The batch request itself is billed
//     as one more transaction (Azure's announcement of the Batch API,
//     https://azure.microsoft.com/updates/batchapiforblob/, 2019-10-23), of
//     a class neither page names; it is counted at $0 here and the note
//     says so.
//
// Reading the run's report (a few GETs) and the listings of folders that
// may be other repositories' (with an include prefix) are left out.
type requestPrice struct {
	cloud       string
	request     string  // what one request is
	keysPer     int     // keys per request
	perThousand float64 // dollars per 1,000 requests
	note        string
}

var sweepPrices = []requestPrice{
	{"S3", "DeleteObjects", 1000, 0.005, "priced as a POST; single DELETEs are free"},
	{"GCS", "objects.delete", 1, 0, "free operation"},
	{"Azure", "Blob Batch", 256, 0, "Delete Blob is free; each batch is one more transaction, of an unpublished class, counted at $0"},
}

// sweepCost is the estimate for one cloud.
type sweepCost struct {
	Cloud    string  `json:"cloud"`
	Request  string  `json:"request"`
	Requests int64   `json:"requests"`
	USD      float64 `json:"usd"`
	Note     string  `json:"note"`
}

// costEstimate is what the dry run says a sweep costs and frees.
type costEstimate struct {
	Candidates int64 `json:"candidates"`
	// Bytes is what a sweep frees; exact when Statted is Candidates,
	// extrapolated from the first Statted candidates otherwise. BytesFrom
	// says which: "exact", "extrapolated", or "unknown" when the
	// candidates could not be statted (Bytes is then 0).
	Bytes     int64       `json:"bytes"`
	BytesFrom string      `json:"bytes_from"`
	Statted   int64       `json:"statted"`
	Gone      int64       `json:"gone,omitempty"`
	Clouds    []sweepCost `json:"clouds"`
	// PricesRead is when the price table was read.
	PricesRead string `json:"prices_read"`
}

const pricesRead = "2026-12-01"

// estimateCost prices the sweep of n candidates.
func estimateCost(n int64) []sweepCost {
	var out []sweepCost
	for _, p := range sweepPrices {
		req := (n + int64(p.keysPer) - 1) / int64(p.keysPer)
		out = append(out, sweepCost{Cloud: p.cloud, Request: p.request, Requests: req, USD: float64(req) * p.perThousand / 1000, Note: p.note})
	}
	return out
}

// printCost prints the estimate for people.
func printCost(w io.Writer, e *costEstimate) {
	switch e.BytesFrom {
	case bytesExtrapolated:
		fmt.Fprintf(w, "a sweep would delete %d objects, about %s (extrapolated from the sizes of the first %d)\n", e.Candidates, humanBytes(e.Bytes), e.Statted)
	case bytesUnknown:
		fmt.Fprintf(w, "a sweep would delete %d objects, of unknown size (the candidates could not be statted)\n", e.Candidates)
	default:
		fmt.Fprintf(w, "a sweep would delete %d objects, %s (exact)\n", e.Candidates, humanBytes(e.Bytes))
	}
	var parts []string
	for _, c := range e.Clouds {
		price := fmt.Sprintf("$%.4f", c.USD)
		if c.USD > 0 && c.USD < 0.0001 {
			price = "under $0.0001"
		}
		parts = append(parts, fmt.Sprintf("%s %d %s requests %s", c.Cloud, c.Requests, c.Request, price))
	}
	fmt.Fprintf(w, "its requests: %s (published prices read %s, in the command's documentation)\n", strings.Join(parts, ", "), e.PricesRead)
}

// humanBytes prints n bytes in binary units.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// costSample is how many candidates the dry run stats for their size, at
// most: beyond it, the bytes are extrapolated from their mean.
const costSample = 10000

// estimate stats up to costSample of the n candidates of the dry run
// runID, and prices their sweep. A failed stat leaves the bytes out, with a
// warning: the dry run itself succeeded.
func estimate(ctx context.Context, client *api.Client, o host.Options, runID string, n int64, logger *slog.Logger) *costEstimate {
	e := &costEstimate{Candidates: n, BytesFrom: bytesExact, Clouds: estimateCost(n), PricesRead: pricesRead}
	if n == 0 {
		return e
	}
	page, _, err := host.CandidatePage(ctx, client, nil, o, runID, 0, costSample)
	if err != nil {
		logger.Warn("lakegc: the candidates' sizes could not be read; the estimate has no bytes", "error", err)
		e.BytesFrom = bytesUnknown
		return e
	}
	for _, c := range page {
		e.Bytes += c.Size
		if c.Gone {
			e.Gone++
		}
	}
	e.Statted = int64(len(page))
	switch {
	case e.Statted == 0:
		e.BytesFrom = bytesUnknown
	case e.Statted < n:
		e.Bytes = int64(float64(e.Bytes) / float64(e.Statted) * float64(n))
		e.BytesFrom = bytesExtrapolated
	}
	return e
}

// How costEstimate.Bytes was had.
const (
	bytesExact        = "exact"
	bytesExtrapolated = "extrapolated"
	bytesUnknown      = "unknown"
)

// noRulesHint says how to give a repository garbage collection rules.
func noRulesHint(repo string) string {
	return fmt.Sprintf(`lakegc gc: repository %s has no garbage collection rules, and lakeFS collects nothing without them. Set them with lakeFS's lakectl, e.g.:
  echo '{"default_retention_days": 21, "branches": [{"branch_id": "main", "retention_days": 28}]}' > rules.json
  lakectl gc set-config lakefs://%s -f rules.json
`, repo, repo)
}
