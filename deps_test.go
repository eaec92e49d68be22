package lakegc_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// cloudSDK matches the packages of a cloud SDK and gocloud's cloud drivers:
// a library package that imports one makes every host build it, whatever
// store the host uses. google.golang.org/api/googleapi and its uritemplates
// are not counted: gocloud.dev/blob itself imports them (through gax-go).
var cloudSDK = regexp.MustCompile(`^(github\.com/Azure/|github\.com/aws/|cloud\.google\.com/go|google\.golang\.org/api/|gocloud\.dev/blob/(s3blob|gcsblob|azureblob)$)`)

// depBudget bounds, per package, its dependencies beyond the standard
// library, gocloud.dev/blob's own (what any host of a gocloud bucket builds
// anyway) and the module's own packages. The package docs state the figures
// of sweep and the root.
var depBudget = map[string]int{
	"github.com/lakegc/lakegc":              65,
	"github.com/lakegc/lakegc/sweep":        64,
	"github.com/lakegc/lakegc/uncommitted":  62,
	"github.com/lakegc/lakegc/retention":    5,
	"github.com/lakegc/lakegc/copytrack":    3,
	"github.com/lakegc/lakegc/pathprovider": 5,
	"github.com/lakegc/lakegc/linkaddr":     5,
	"github.com/lakegc/lakegc/namespace":    5,
}

// cloudPackages are the packages whose purpose is one cloud's API.
var cloudPackages = map[string]bool{
	"github.com/lakegc/lakegc/sweep/azdelete":  true,
	"github.com/lakegc/lakegc/sweep/gcsdelete": true,
	"github.com/lakegc/lakegc/sweep/s3delete":  true,
	"github.com/lakegc/lakegc/sweep/s3list":    true,
}

// goList runs go list in this module and returns its non-empty lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Skipf("no go command: %v", err)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestNoCloudSDKInTheCore lists the dependencies of every library package of
// the module: none but the deleters of one cloud may pull in a cloud SDK,
// and the core packages stay within their budgets. (go list -deps ./sweep
// does name google.golang.org packages, grpc's and protobuf's: gocloud.dev's
// own error codes import them.)
func TestNoCloudSDKInTheCore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	base := map[string]bool{}
	for _, p := range goList(t, "-deps", "gocloud.dev/blob") {
		base[p] = true
	}
	standard := map[string]bool{}
	for _, p := range goList(t, "-deps", "-f", "{{if .Standard}}{{.ImportPath}}{{end}}", "./...") {
		standard[p] = true
	}
	seen := 0
	// Each non-main package with its dependencies, "pkg: dep dep...".
	for _, line := range goList(t, "-f", `{{if ne .Name "main"}}{{.ImportPath}}:{{range .Deps}} {{.}}{{end}}{{end}}`, "./...") {
		pkg, deps, _ := strings.Cut(line, ":")
		if cloudPackages[pkg] {
			continue
		}
		var extra, cloud []string
		for _, d := range strings.Fields(deps) {
			if standard[d] || base[d] || strings.HasPrefix(d, "github.com/lakegc/lakegc/") {
				// The module's own packages (internal ones split off
				// sweep included) are not dependencies a host takes on.
				continue
			}
			extra = append(extra, d)
			if cloudSDK.MatchString(d) {
				cloud = append(cloud, d)
			}
		}
		if len(cloud) > 0 {
			t.Errorf("%s imports a cloud SDK: %v", pkg, cloud)
		}
		if budget, ok := depBudget[pkg]; ok {
			seen++
			if len(extra) > budget {
				t.Errorf("%s has %d dependencies beyond the standard library and gocloud.dev/blob, over its budget of %d: %v", pkg, len(extra), budget, extra)
			}
			t.Logf("%s: %d dependencies beyond the standard library and gocloud.dev/blob", pkg, len(extra))
		}
	}
	if seen != len(depBudget) {
		t.Errorf("found %d of the %d budgeted packages", seen, len(depBudget))
	}
}
