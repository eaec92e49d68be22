package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A copy is a literal of the code (not of its comments) that spells a layout
// fact or parses an address by hand, outside the packages that own it.
type copyRule struct {
	what  string
	owner []string // folders, relative to the repository, where it belongs
	// match reports whether a literal is a copy; declared is the name of
	// the constant or variable the literal is the value of, or "".
	match func(lit *ast.BasicLit, value, declared string) bool
}

var copyRules = []copyRule{
	{"the storage prefix \"_lakefs\"", []string{"internal/layout"}, func(_ *ast.BasicLit, v, _ string) bool {
		return storagePrefixRE.MatchString(v)
	}},
	{"a path of the retention/gc tree", []string{"internal/layout"}, func(_ *ast.BasicLit, v, _ string) bool {
		return strings.Contains(v, "retention/gc") || strings.Contains(v, "run_id=")
	}},
	{"the year-4000 reversal point", []string{"internal/layout"}, func(lit *ast.BasicLit, v, _ string) bool {
		if lit.Kind == token.INT {
			n, err := strconv.ParseInt(strings.ReplaceAll(lit.Value, "_", ""), 0, 64)
			return err == nil && n == ReversalPoint
		}
		return strings.Contains(v, "4000-01-01") || strings.Contains(v, "64060588800")
	}},
	{"an address parsed at \"://\" by hand", []string{"internal/nsaddr"}, func(lit *ast.BasicLit, v, _ string) bool {
		return lit.Kind == token.STRING && v == "://"
	}},
	// "data" is too common a word to refuse everywhere: a constant or
	// variable named as a prefix is the fact itself.
	{"the data prefix \"data\" declared", []string{"internal/layout"}, func(lit *ast.BasicLit, v, declared string) bool {
		return lit.Kind == token.STRING && v == "data" && strings.HasSuffix(strings.ToLower(declared), "prefix")
	}},
}

// storagePrefixRE matches "_lakefs" as a path element ("/setup_lakefs", an
// API path of lakeFS's, is not one).
var storagePrefixRE = regexp.MustCompile(`(^|[^A-Za-z0-9_])_lakefs($|[^A-Za-z0-9_])`)

// copyAllowed are the literals a file may hold although a rule matches
// them (the literal as written, or a part of a longer one), and why. Keep it
// short: each entry is a place the rule does not decide.
var copyAllowed = []struct{ file, literal, why string }{
	{"identity.go", "://", "not a predicate: hides the userinfo of any URI in reports and logs"},
	{"namespace/namespace.go", "://", "the parser that opens a bucket: refuses what is not a URI of a store it knows"},
	{"examples/gccycle/main.go", "://", "builds a URL for the example's output"},
	{"lakefs/internal/lakefstest/history.go", "://", "test support: a bare scheme as the prefix of test namespaces"},
	{"lakefs/cmd/lakegc/cli.go", "(_lakefs/dummy)", "help text naming lakeFS's marker"},
}

// allowed reports whether copyAllowed lets file hold the literal value.
func allowed(file, value string) bool {
	for _, a := range copyAllowed {
		if a.file == file && (value == a.literal || len(a.literal) > 3 && strings.Contains(value, a.literal)) {
			return true
		}
	}
	return false
}

// findCopies returns "<file>:<line>: <rule>" for every copy in the Go files
// under root, test files and testdata apart, and the files read, relative
// to root.
func findCopies(t *testing.T, root string) (found, files []string) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, rel)
		declared := map[*ast.BasicLit]string{}
		ast.Inspect(f, func(n ast.Node) bool {
			if spec, ok := n.(*ast.ValueSpec); ok {
				for i, v := range spec.Values {
					if lit, ok := v.(*ast.BasicLit); ok && i < len(spec.Names) {
						declared[lit] = spec.Names[i].Name
					}
				}
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok {
				return true
			}
			value := lit.Value
			if lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil {
					value = v
				}
			}
			for _, r := range copyRules {
				if !r.match(lit, value, declared[lit]) || slices.ContainsFunc(r.owner, func(o string) bool { return strings.HasPrefix(rel, o+"/") }) {
					continue
				}
				if allowed(rel, value) {
					continue
				}
				found = append(found, fset.Position(lit.Pos()).String()+": "+r.what)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found, files
}

// TestNoSecondCopy: every layout fact and every hand-made address parse
// lives once, in internal/layout or internal/nsaddr; other packages call
// them. It reads every non-test Go file of every module of go.work.
func TestNoSecondCopy(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Skipf("not in the repository: %v", err)
	}
	found, files := findCopies(t, root)
	if len(files) < 150 {
		t.Fatalf("read %d Go files: the walk missed the repository", len(files))
	}
	// Every module of go.work is read: a module the walk skipped (a folder
	// renamed to start with '_' or '.') would hide its copies.
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	modules := regexp.MustCompile(`(?m)^\s*(?:use\s+)?(\.(?:/[^\s/]+)*)\s*$`).FindAllStringSubmatch(string(work), -1)
	if len(modules) < 2 {
		t.Fatalf("go.work names %d modules: its use lines were not understood", len(modules))
	}
	for _, m := range modules {
		dir := strings.TrimPrefix(strings.TrimPrefix(m[1], "."), "/")
		if !slices.ContainsFunc(files, func(f string) bool {
			return dir == "" && !strings.Contains(f, "/") || dir != "" && strings.HasPrefix(f, dir+"/")
		}) {
			t.Errorf("no Go file of module %s was read", m[1])
		}
	}
	for _, f := range found {
		t.Errorf("%s outside its package: call internal/layout or internal/nsaddr (or namespace, from a host)", f)
	}
}

// TestFindCopies: the scan finds each kind of copy in code, and none in
// comments or in the owning packages.
func TestFindCopies(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", `package a

// "_lakefs/retention/gc/unified/", 64060588800 and "://" in a comment are fine.
const prefix = "_lakefs"
const api = "/setup_lakefs"
const tree = "x/retention/gc/commits/"
const epoch = 64_060_588_800
var cut = []string{"://", "4000-01-01"}
const DefaultDataPrefix, name = "data", "data"
`)
	write("internal/layout/l.go", "package layout\n\nconst p = \"_lakefs\"\n")
	write("internal/nsaddr/n.go", "package nsaddr\n\nconst s = \"://\"\n")
	write("a/a_test.go", "package a\n\nconst p = \"_lakefs\"\n")
	write("a/testdata/t.go", "package t\n\nconst p = \"_lakefs\"\n")
	found, files := findCopies(t, root)
	if len(files) != 3 {
		t.Errorf("read %q, want 3 files", files)
	}
	want := []string{"a.go:4:16", "a.go:6:14", "a.go:7:15", "a.go:8:20", "a.go:8:27", "a.go:9:33"}
	if len(found) != len(want) {
		t.Fatalf("found %d copies, want %d:\n%s", len(found), len(want), strings.Join(found, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(found[i], w) {
			t.Errorf("copy %d = %q, want one at %s", i, found[i], w)
		}
	}
}
