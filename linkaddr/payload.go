package linkaddr

import "encoding/json"

// payload is what a signature covers, as lakeFS defines it: the field names,
// their order and Go's default JSON encoding (HTML characters escaped) are
// all part of the wire format.
type payload struct {
	Repository      string
	Branch          string
	Path            string
	PhysicalAddress string
}

// appendPayload appends the JSON encoding of the payload to dst. When no
// string needs escaping it writes the bytes json.Marshal would write without
// calling it; otherwise it calls json.Marshal, so the escaping rules are
// exactly encoding/json's.
func appendPayload(dst []byte, repository, branch, path, address string) []byte {
	if !plain(repository) || !plain(branch) || !plain(path) || !plain(address) {
		b, _ := json.Marshal(payload{repository, branch, path, address}) // four strings: cannot fail
		return append(dst, b...)
	}
	dst = append(dst, `{"Repository":"`...)
	dst = append(dst, repository...)
	dst = append(dst, `","Branch":"`...)
	dst = append(dst, branch...)
	dst = append(dst, `","Path":"`...)
	dst = append(dst, path...)
	dst = append(dst, `","PhysicalAddress":"`...)
	dst = append(dst, address...)
	return append(dst, `"}`...)
}

// plain reports whether encoding/json writes s unchanged inside quotes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

// plainByte holds the bytes encoding/json writes as they are: printable ASCII
// other than the quote, the backslash and the HTML characters it escapes.
var plainByte = func() (t [256]bool) {
	for c := ' '; c < 0x7f; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()
