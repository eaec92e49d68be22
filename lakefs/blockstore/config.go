package blockstore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ErrInvalidInput is wrapped by every error about the configuration itself: a
// file too large or not YAML, a setting of the wrong type, a blockstore type
// lakegc cannot open, a namespace of another kind than the blockstore.
var ErrInvalidInput = errors.New("blockstore: invalid input")

// ErrUnsupported is wrapped by the error for a configuration lakeFS runs
// with but this package does not read: the multi-storage "blockstores" form,
// and the in-memory blockstores ("mem", "transient"), which hold nothing to
// collect.
var ErrUnsupported = errors.New("blockstore: unsupported configuration")

// MaxFileSize is the largest configuration file Load reads; lakeFS's files
// are a few kilobytes.
const MaxFileSize = 1 << 20

// EnvPrefix is the prefix of lakeFS's configuration variables: the key
// blockstore.s3.endpoint is LAKEFS_BLOCKSTORE_S3_ENDPOINT.
const EnvPrefix = "LAKEFS_"

// Defaults lakeFS applies to the settings this package reads.
const (
	DefaultLocalPath   = "~/lakefs/data/block"   // blockstore.local.path
	DefaultS3Region    = "us-east-1"             // blockstore.s3.region
	DefaultS3Retries   = 5                       // blockstore.s3.max_retries
	DefaultAzureDomain = "blob.core.windows.net" // blockstore.azure.domain
)

// The blockstore types (blockstore.type) this package opens.
const (
	TypeS3    = "s3"
	TypeGS    = "gs"
	TypeAzure = "azure"
	TypeLocal = "local"
)

// Secret is a setting that must never be printed: a secret key, a session
// token, a service account's JSON. Every way of formatting it (fmt's verbs,
// slog, JSON, YAML) shows "[SECRET]" when set and "" when not; Value returns
// the setting itself.
type Secret string

const redacted = "[SECRET]"

// Value returns the secret itself, for the client that needs it.
func (s Secret) Value() string { return string(s) }

// String returns "[SECRET]", or "" for an empty secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString is String, for %#v.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// Format writes String whatever the verb, so that no verb (%x, %q, %d)
// prints the secret.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// LogValue is String, for log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText is String, for encoding/json and YAML encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Config is the part of lakeFS's configuration that says where its objects
// are and how to reach them: its blockstore section. Its String and LogValue
// name the settings and hide the secrets (see Secret).
type Config struct {
	// Type is blockstore.type: "s3", "gs", "azure" or "local".
	Type  string
	S3    S3
	GS    GS
	Azure Azure
	Local Local
}

// S3 is blockstore.s3: how lakeFS reaches S3 or an S3-compatible store.
type S3 struct {
	Region               string // region (default DefaultS3Region)
	Endpoint             string // endpoint: an S3-compatible server's URL; empty for AWS
	ForcePathStyle       bool   // force_path_style: bucket in the path, not the host
	DiscoverBucketRegion bool   // discover_bucket_region (default true): ask S3 for the bucket's region
	MaxRetries           int    // max_retries (default DefaultS3Retries)
	// SkipVerifyCertificate is skip_verify_certificate_test_only: TLS
	// certificates are not checked.
	SkipVerifyCertificate bool
	Profile               string // profile: a profile of the shared AWS configuration
	CredentialsFile       string // credentials_file: a shared credentials file
	// AccessKeyID, SecretAccessKey and SessionToken are
	// credentials.access_key_id, .secret_access_key and .session_token:
	// static keys, used instead of the AWS SDK's chain when AccessKeyID is
	// set.
	AccessKeyID     Secret
	SecretAccessKey Secret
	SessionToken    Secret
}

// GS is blockstore.gs: the service account lakeFS uses on Google Cloud
// Storage; without either, Application Default Credentials.
type GS struct {
	CredentialsFile string // credentials_file: a service account key file
	CredentialsJSON Secret // credentials_json: the key itself
}

// Azure is blockstore.azure: the storage account and key lakeFS uses;
// without a key, Azure's default credential chain.
type Azure struct {
	StorageAccount   string        // storage_account
	StorageAccessKey Secret        // storage_access_key
	Domain           string        // domain (default DefaultAzureDomain)
	TryTimeout       time.Duration // try_timeout; 0: the SDK's default
	// TestEndpointURL is test_endpoint_url: an emulator's account URL
	// (Azurite's "http://127.0.0.1:10000/devstoreaccount1") used instead of
	// https://<account>.<domain>.
	TestEndpointURL string
}

// Local is blockstore.local: the folder of lakeFS's local blockstore.
type Local struct {
	Path string // path (default DefaultLocalPath), "~" expanded, made absolute
}

// String describes the configuration without its secrets.
func (c *Config) String() string {
	if c == nil {
		return "<nil>"
	}
	switch c.Type {
	case TypeS3:
		s := c.S3
		return fmt.Sprintf("blockstore s3 (region %q, endpoint %q, force_path_style %t, discover_bucket_region %t, max_retries %d, profile %q, credentials_file %q, static keys %t, session token %t)",
			s.Region, s.Endpoint, s.ForcePathStyle, s.DiscoverBucketRegion, s.MaxRetries, s.Profile, s.CredentialsFile, s.AccessKeyID != "", s.SessionToken != "")
	case TypeGS:
		return fmt.Sprintf("blockstore gs (credentials_file %q, credentials_json %t)", c.GS.CredentialsFile, c.GS.CredentialsJSON != "")
	case TypeAzure:
		a := c.Azure
		return fmt.Sprintf("blockstore azure (storage_account %q, domain %q, test_endpoint_url %q, storage_access_key %t)",
			a.StorageAccount, a.Domain, a.TestEndpointURL, a.StorageAccessKey != "")
	case TypeLocal:
		return fmt.Sprintf("blockstore local (path %q)", c.Local.Path)
	}
	return fmt.Sprintf("blockstore %q", c.Type)
}

// GoString is String, so that %#v shows no secret either.
func (c *Config) GoString() string { return c.String() }

// Format writes String whatever the verb: %v, %+v and %#v of a Config show
// no secret.
func (c *Config) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// LogValue is String, for log/slog.
func (c *Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Load reads lakeFS's configuration file (at most MaxFileSize bytes) and
// the LAKEFS_BLOCKSTORE_* variables of getenv (os.Getenv; nil for none), as
// Parse does. path "" reads the environment alone.
func Load(path string, getenv func(string) string) (*Config, error) {
	var data []byte
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("blockstore: %w", err)
		}
		defer f.Close()
		data, err = io.ReadAll(io.LimitReader(f, MaxFileSize+1))
		if err != nil {
			return nil, fmt.Errorf("blockstore: %s: %w", path, err)
		}
		if len(data) > MaxFileSize {
			return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalidInput, path, MaxFileSize)
		}
	}
	c, err := Parse(data, getenv)
	if err != nil && path != "" {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, err
}

// Parse reads the blockstore section of lakeFS's configuration from a YAML
// document (data, at most MaxFileSize bytes; empty for none) and from
// getenv's LAKEFS_BLOCKSTORE_* variables, which win over the file, as in
// lakeFS (a variable set to "" counts as unset). Keys are matched regardless
// of case; keys this package does not read are ignored (lakeFS itself
// refuses a file with keys it does not know). Values convert as lakeFS's
// do: a boolean from true/false or a string strconv.ParseBool accepts, a
// number from a number or a numeric string, a string from any scalar; a
// mapping or a list where a value belongs, or a value that does not convert,
// is an error wrapping ErrInvalidInput that names the key, never the value.
// lakeFS's defaults fill what is unset (Default*); "~" in the local path and
// the GCS credentials file is the home directory, as lakeFS expands it.
//
// The type must be one of the Type* constants; the multi-storage
// "blockstores" section and the in-memory types are ErrUnsupported.
func Parse(data []byte, getenv func(string) string) (*Config, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrInvalidInput, MaxFileSize)
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml's messages quote at most a line's position and a token.
		return nil, fmt.Errorf("%w: not YAML: %s", ErrInvalidInput, yamlMessage(err))
	}
	root, err := asMap("", doc)
	if err != nil {
		return nil, err
	}
	if v, ok := root["blockstores"]; ok && v != nil {
		return nil, fmt.Errorf("%w: the multi-storage section \"blockstores\": give the storage's settings under \"blockstore\"", ErrUnsupported)
	}
	r := reader{root: root, getenv: getenv}
	c := &Config{}
	r.str("blockstore.type", &c.Type)
	switch c.Type {
	case TypeS3:
		s := &c.S3
		s.Region, s.MaxRetries, s.DiscoverBucketRegion = DefaultS3Region, DefaultS3Retries, true
		r.str("blockstore.s3.region", &s.Region)
		r.str("blockstore.s3.endpoint", &s.Endpoint)
		r.boolean("blockstore.s3.force_path_style", &s.ForcePathStyle)
		r.boolean("blockstore.s3.discover_bucket_region", &s.DiscoverBucketRegion)
		r.integer("blockstore.s3.max_retries", &s.MaxRetries)
		r.boolean("blockstore.s3.skip_verify_certificate_test_only", &s.SkipVerifyCertificate)
		r.str("blockstore.s3.profile", &s.Profile)
		r.str("blockstore.s3.credentials_file", &s.CredentialsFile)
		r.secret("blockstore.s3.credentials.access_key_id", &s.AccessKeyID)
		r.secret("blockstore.s3.credentials.secret_access_key", &s.SecretAccessKey)
		r.secret("blockstore.s3.credentials.session_token", &s.SessionToken)
	case TypeGS:
		r.str("blockstore.gs.credentials_file", &c.GS.CredentialsFile)
		r.secret("blockstore.gs.credentials_json", &c.GS.CredentialsJSON)
		if r.err == nil && c.GS.CredentialsFile != "" {
			c.GS.CredentialsFile, r.err = expandHome("blockstore.gs.credentials_file", c.GS.CredentialsFile, getenv)
		}
	case TypeAzure:
		a := &c.Azure
		a.Domain = DefaultAzureDomain
		r.str("blockstore.azure.storage_account", &a.StorageAccount)
		r.secret("blockstore.azure.storage_access_key", &a.StorageAccessKey)
		r.str("blockstore.azure.domain", &a.Domain)
		r.duration("blockstore.azure.try_timeout", &a.TryTimeout)
		r.str("blockstore.azure.test_endpoint_url", &a.TestEndpointURL)
		var china bool
		r.boolean("blockstore.azure.china_cloud", &china)
		if china {
			// lakeFS's deprecated switch sets the domain.
			a.Domain = "blob.core.chinacloudapi.cn"
		}
	case TypeLocal:
		c.Local.Path = DefaultLocalPath
		r.str("blockstore.local.path", &c.Local.Path)
		if r.err == nil {
			c.Local.Path, r.err = localPath(c.Local.Path, getenv)
		}
	case "mem", "memory", "transient":
		if r.err == nil {
			return nil, fmt.Errorf("%w: blockstore.type %q keeps objects in lakeFS's memory", ErrUnsupported, c.Type)
		}
	case "":
		if r.err == nil {
			return nil, fmt.Errorf("%w: blockstore.type is not set (nor %s)", ErrInvalidInput, envName("blockstore.type"))
		}
	default:
		if r.err == nil {
			return nil, fmt.Errorf("%w: blockstore.type %q is none of s3, gs, azure, local", ErrInvalidInput, c.Type)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return c, nil
}

// yamlMessage is the text of a YAML error, cut to its first line.
func yamlMessage(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	const max = 200
	if len(msg) > max {
		msg = msg[:max] + "…"
	}
	return msg
}

// envName is the variable lakeFS reads for key.
func envName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// asMap is a YAML mapping with its keys in lower case (lakeFS matches keys
// regardless of case); nil is an empty one.
func asMap(key string, v any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		where := key
		if where == "" {
			where = "the document"
		}
		return nil, fmt.Errorf("%w: %s is %s, not a mapping", ErrInvalidInput, where, kindOf(v))
	}
	out := make(map[string]any, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		lk := strings.ToLower(k)
		if _, dup := out[lk]; dup {
			return nil, fmt.Errorf("%w: %s has the key %q twice (keys are matched regardless of case)", ErrInvalidInput, orRoot(key), lk)
		}
		out[lk] = m[k]
	}
	return out, nil
}

func orRoot(key string) string {
	if key == "" {
		return "the document"
	}
	return key
}

// kindOf names the YAML kind of a decoded value, for errors (never the
// value itself).
func kindOf(v any) string {
	switch v.(type) {
	case map[string]any, map[any]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	case time.Time:
		return "a timestamp"
	case nil:
		return "null"
	}
	return fmt.Sprintf("a %T", v)
}

// reader looks keys up in the environment, then in the document, and keeps
// the first error.
type reader struct {
	root   map[string]any
	getenv func(string) string
	err    error
}

// lookup returns key's value: the environment's as a string, else the
// document's; ok is false when neither sets it (or the document's is null).
func (r *reader) lookup(key string) (v any, ok bool) {
	if r.err != nil {
		return nil, false
	}
	if s := r.getenv(envName(key)); s != "" {
		return s, true
	}
	m := r.root
	parts := strings.Split(key, ".")
	for i, p := range parts {
		v, ok = m[p]
		if !ok || v == nil {
			return nil, false
		}
		if i == len(parts)-1 {
			return v, true
		}
		var err error
		if m, err = asMap(strings.Join(parts[:i+1], "."), v); err != nil {
			r.err = err
			return nil, false
		}
	}
	return nil, false
}

func (r *reader) fail(key, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s: "+format, append([]any{ErrInvalidInput, key}, args...)...)
	}
}

// str reads a string: any scalar, as lakeFS converts it.
func (r *reader) str(key string, dst *string) {
	v, ok := r.lookup(key)
	if !ok {
		return
	}
	switch x := v.(type) {
	case string:
		*dst = x
	case bool:
		*dst = "0"
		if x {
			*dst = "1"
		}
	case int:
		*dst = strconv.Itoa(x)
	case int64:
		*dst = strconv.FormatInt(x, 10)
	case uint64:
		*dst = strconv.FormatUint(x, 10)
	case float64:
		*dst = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		r.fail(key, "%s, not a string", kindOf(v))
	}
}

func (r *reader) secret(key string, dst *Secret) {
	var s string
	r.str(key, &s)
	if s != "" {
		*dst = Secret(s)
	}
}

// boolean reads a boolean: true/false, a number (non-zero is true), or a
// string strconv.ParseBool accepts.
func (r *reader) boolean(key string, dst *bool) {
	v, ok := r.lookup(key)
	if !ok {
		return
	}
	switch x := v.(type) {
	case bool:
		*dst = x
	case int:
		*dst = x != 0
	case int64:
		*dst = x != 0
	case uint64:
		*dst = x != 0
	case float64:
		*dst = x != 0
	case string:
		if x == "" {
			*dst = false
			return
		}
		b, err := strconv.ParseBool(x)
		if err != nil {
			r.fail(key, "a string that is not a boolean (true or false)")
			return
		}
		*dst = b
	default:
		r.fail(key, "%s, not a boolean", kindOf(v))
	}
}

// integer reads an int: a whole number, a boolean (1 or 0), or a numeric
// string.
func (r *reader) integer(key string, dst *int) {
	v, ok := r.lookup(key)
	if !ok {
		return
	}
	switch x := v.(type) {
	case int:
		*dst = x
	case int64:
		if x < math.MinInt || x > math.MaxInt {
			r.fail(key, "a number out of range")
			return
		}
		*dst = int(x)
	case bool:
		*dst = 0
		if x {
			*dst = 1
		}
	case float64:
		if x != math.Trunc(x) || x < math.MinInt32 || x > math.MaxInt32 {
			r.fail(key, "a number that is not a whole number in range")
			return
		}
		*dst = int(x)
	case string:
		if x == "" {
			*dst = 0
			return
		}
		n, err := strconv.ParseInt(x, 0, strconv.IntSize)
		if err != nil {
			r.fail(key, "a string that is not a whole number")
			return
		}
		*dst = int(n)
	default:
		r.fail(key, "%s, not a number", kindOf(v))
	}
}

// duration reads a time.Duration: a string time.ParseDuration accepts, or
// a whole number of nanoseconds.
func (r *reader) duration(key string, dst *time.Duration) {
	v, ok := r.lookup(key)
	if !ok {
		return
	}
	switch x := v.(type) {
	case string:
		if x == "" {
			*dst = 0
			return
		}
		d, err := time.ParseDuration(x)
		if err != nil {
			r.fail(key, "a string that is not a duration such as 10m")
			return
		}
		*dst = d
	case int:
		*dst = time.Duration(x)
	default:
		r.fail(key, "%s, not a duration", kindOf(v))
	}
}

// expandHome expands a leading "~" as lakeFS does ("~" or "~/…"; "~user"
// is an error).
func expandHome(key, p string, getenv func(string) string) (string, error) {
	if p == "" || p[0] != '~' {
		return p, nil
	}
	if len(p) > 1 && p[1] != '/' && p[1] != '\\' {
		return "", fmt.Errorf("%w: %s: only ~ or ~/ expands to the home directory", ErrInvalidInput, key)
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("%w: %s starts with ~: %v", ErrInvalidInput, key, err)
		}
	}
	return filepath.Join(home, p[1:]), nil
}

// localPath is the local blockstore's folder, "~" expanded, absolute.
func localPath(p string, getenv func(string) string) (string, error) {
	const key = "blockstore.local.path"
	if p == "" {
		return "", fmt.Errorf("%w: %s is empty", ErrInvalidInput, key)
	}
	p, err := expandHome(key, p, getenv)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrInvalidInput, key, err)
	}
	return abs, nil
}
