package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/blockstore"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/retention"
)

const rulesUsage = `Usage:
  lakegc rules show --repo NAME [--json]
  lakegc rules set  --repo NAME --file FILE          (FILE "-" reads stdin)
  lakegc rules set  --repo NAME [--keep-tags=false] [--stale-branch-days D]
                    [--keep-last BRANCH=N]... [--keep-last-pattern REGEXP=N]...
                    [--retention-days-pattern REGEXP=D]...

Shows or sets lakegc's extended retention rules ("set" replaces them all),
kept in a file of their own beside lakeFS's rules in the repository's
storage namespace ("show" names it); lakeFS never reads them, "lakegc gc"
applies both. "show" prints lakeFS's rules too (set those with lakectl
gc set-config). Without a file, "lakegc gc" keeps every tagged commit and
its ancestors within lakeFS's default retention.

  --keep-tags               keep tagged commits (default true)
  --keep-last BRANCH=N      keep the last N commits of BRANCH: its HEAD and first parents (a merge
                            counts once; the commits it brought in are neither counted nor kept)
  --keep-last-pattern RE=N  keep the last N commits of every branch whose whole name RE matches
  --retention-days-pattern RE=D
                            keep D days on the branches RE matches that lakeFS's rules do not name
  --stale-branch-days D     stop protecting the HEAD of a branch without a commit for D days,
                            never the default branch (can only delete more; 0: off)

A branch takes the first rule by branch that matches it, in the order
given, and no other; lakeFS's own rule for a branch wins over
--retention-days-pattern. "lakegc gc" only adds to what lakeFS's
prepare_commits keeps: it reports the stale rule, and days below lakeFS's
default, as not applied.

Connection flags as for gc: --endpoint, --access-key-id, --secret-access-key
(or lakectl's variables), --blockstore-path, --lakefs-config.
`

// runRules is "lakegc rules": args after "rules".
func runRules(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "show" && args[0] != "set" {
		if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
			fmt.Fprint(stdout, rulesUsage)
			return exitOK
		}
		fmt.Fprint(stderr, rulesUsage)
		return exitUsage
	}
	verb := args[0]
	fs := flag.NewFlagSet("lakegc rules "+verb, flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	fs.Usage = func() { fmt.Fprint(fs.Output(), rulesUsage) }
	var (
		endpoint, keyID, secret, repo, bsPath, lakeFSConfig, file string
		asJSON, keepTags                                          bool
		stale                                                     int
		ext                                                       retention.Extended
	)
	fs.StringVar(&endpoint, "endpoint", "", "lakeFS URL")
	fs.StringVar(&keyID, "access-key-id", "", "access key ID")
	fs.StringVar(&secret, "secret-access-key", "", "secret access key")
	fs.StringVar(&repo, "repo", "", "repository name")
	fs.StringVar(&bsPath, "blockstore-path", "", "lakeFS's local blockstore folder")
	fs.StringVar(&lakeFSConfig, "lakefs-config", "", "lakeFS's configuration file")
	fs.BoolVar(&asJSON, "json", false, "show: print JSON")
	fs.StringVar(&file, "file", "", "set: the rules file")
	fs.BoolVar(&keepTags, "keep-tags", true, "set: keep tagged commits")
	fs.IntVar(&stale, "stale-branch-days", 0, "set: stale-branch rule")
	addRule := func(pattern bool, days bool) func(string) error {
		return func(v string) error {
			i := strings.LastIndexByte(v, '=')
			if i <= 0 {
				return fmt.Errorf("%q is not NAME=NUMBER", v)
			}
			n, err := strconv.ParseInt(v[i+1:], 10, 32)
			if err != nil {
				return fmt.Errorf("%q: %v", v, err)
			}
			r := retention.BranchRule{Branch: v[:i]}
			if pattern {
				r = retention.BranchRule{Pattern: v[:i]}
			}
			if days {
				d := int32(n)
				r.RetentionDays = &d
			} else {
				r.KeepLast = int32(n)
			}
			ext.Branches = append(ext.Branches, r)
			return nil
		}
	}
	fs.Func("keep-last", "set: BRANCH=N", addRule(false, false))
	fs.Func("keep-last-pattern", "set: REGEXP=N", addRule(true, false))
	fs.Func("retention-days-pattern", "set: REGEXP=D", addRule(true, true))
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = out.WriteTo(stdout)
			return exitOK
		}
		_, _ = out.WriteTo(stderr)
		return exitUsage
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lakegc rules %s: "+format+"\n", append([]any{verb}, a...)...)
		return exitUsage
	}
	for _, v := range []struct {
		p   *string
		env string
	}{{&endpoint, api.EnvEndpointURL}, {&keyID, api.EnvAccessKeyID}, {&secret, api.EnvSecretAccessKey}, {&bsPath, envBlockstorePath}} {
		if *v.p == "" {
			*v.p = getenv(v.env)
		}
	}
	switch {
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q", fs.Arg(0))
	case repo == "":
		return usageErr("--repo is required")
	case endpoint == "" || keyID == "" || secret == "":
		return usageErr("the lakeFS endpoint and an access key pair are required (flags, or %s, %s, %s)", api.EnvEndpointURL, api.EnvAccessKeyID, api.EnvSecretAccessKey)
	case verb == "show" && (file != "" || len(ext.Branches) > 0 || stale != 0):
		return usageErr("show takes no rules")
	case verb == "set" && file != "" && (len(ext.Branches) > 0 || stale != 0):
		return usageErr("--file or rule flags, not both")
	case stale < 0:
		return usageErr("--stale-branch-days %d is negative", stale)
	case stale > math.MaxInt32:
		return usageErr("--stale-branch-days %d is too large", stale)
	}
	if verb == "set" {
		if file != "" {
			b, err := readRulesFile(file)
			if err == nil {
				err = ext.UnmarshalJSON(b)
			}
			if err != nil {
				return usageErr("--file %s: %v", file, err)
			}
		} else {
			ext.KeepTags, ext.StaleBranchDays = keepTags, int32(stale)
		}
		if err := ext.Validate(); err != nil {
			return usageErr("%v", err)
		}
	}
	var store *blockstore.Config
	if lakeFSConfig != "" {
		var err error
		if store, err = blockstore.Load(lakeFSConfig, getenv); err != nil {
			return usageErr("--lakefs-config: %v", err)
		}
		if store.Type == blockstore.TypeLocal && bsPath == "" {
			bsPath = store.Local.Path
		}
	}
	client, err := api.New(endpoint, keyID, secret)
	if err != nil {
		return usageErr("%v", err)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "lakegc rules %s: %v\n", verb, err)
		if host.IsLakeFS(err) {
			return exitLakeFS
		}
		return exitFailed
	}
	r, err := client.GetRepository(ctx, repo)
	if err != nil {
		return fail(err)
	}
	bucket, err := host.OpenNamespace(ctx, r.StorageNamespace, bsPath, store)
	if err != nil {
		return fail(err)
	}
	defer bucket.Close()
	rs := retention.NewExtendedStore(bucket, retention.WithStoragePrefix(lakegc.DefaultStoragePrefix))
	if verb == "set" {
		if err := rs.Save(ctx, &ext); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "lakegc's rules of %s set: %s\n", repo, &ext)
		return exitOK
	}
	cur, err := rs.Get(ctx)
	found := err == nil
	if errors.Is(err, retention.ErrNotFound) {
		cur, err = host.DefaultExtended(), nil
	}
	if err != nil {
		return fail(err)
	}
	lr, err := client.GetGCRules(ctx, repo)
	if err != nil && !errors.Is(err, api.ErrNotFound) {
		return fail(err)
	}
	if asJSON {
		j := struct {
			LakeFS        *api.GCRules        `json:"lakefs"`
			Extended      *retention.Extended `json:"extended"`
			ExtendedKey   string              `json:"extended_key"`
			ExtendedFound bool                `json:"extended_found"`
		}{lr, cur, rs.Key(), found}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(j); err != nil {
			return fail(err)
		}
		return exitOK
	}
	if lr == nil {
		fmt.Fprintln(stdout, "lakeFS's rules: none (every commit is kept; set them with lakectl gc set-config)")
	} else {
		fmt.Fprintf(stdout, "lakeFS's rules: %d days by default", lr.DefaultRetentionDays)
		for _, b := range lr.Branches {
			fmt.Fprintf(stdout, ", %q %d days", b.BranchID, b.RetentionDays)
		}
		fmt.Fprintln(stdout)
	}
	where := rs.Key()
	if !found {
		where = "none at " + where + ": the command's default"
	}
	fmt.Fprintf(stdout, "lakegc's rules (%s): %s\n", where, cur)
	return exitOK
}

// readRulesFile reads a rules file, "-" for stdin, at most
// retention.MaxExtendedSize+1 bytes.
func readRulesFile(name string) ([]byte, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return io.ReadAll(io.LimitReader(r, retention.MaxExtendedSize+1))
}
