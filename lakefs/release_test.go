package lakefs

import (
	"os"
	"regexp"
	"testing"
)

// The module must stay installable with go install …@version, which
// refuses a go.mod with a replace or exclude directive, and must require the library
// at a released version (the package documentation's release rule).
func TestGoModInstallable(t *testing.T) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^\s*replace\b`).Match(b) {
		t.Error("go.mod has a replace directive: go install …@version would refuse the module; the workspace (go.work) joins the modules")
	}
	if regexp.MustCompile(`(?m)^\s*exclude\b`).Match(b) {
		t.Error("go.mod has an exclude directive: go install …@version would refuse the module")
	}
	if !regexp.MustCompile(`(?m)^\s*github\.com/lakegc/lakegc v\d+\.\d+\.\d+\s*$`).Match(b) {
		t.Error("go.mod does not require github.com/lakegc/lakegc at a release version vX.Y.Z")
	}
}
