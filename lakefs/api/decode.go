package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// decodeOne decodes b, which must hold exactly one JSON value, into v.
func decodeOne(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON value")
	}
	return nil
}

// errorBody is lakeFS's error answer.
type errorBody struct {
	Message *string `json:"message"`
}

// maxMessageBytes bounds the error message kept from an answer.
const maxMessageBytes = 512

// errorMessage extracts lakeFS's message from an error answer: the "message"
// of its first JSON value, else the start of the body on one line.
func errorMessage(b []byte) string {
	var e errorBody
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&e); err == nil && e.Message != nil {
		return clip(*e.Message)
	}
	return clip(string(b))
}

// clip makes s a short, valid, single-line string.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxMessageBytes {
		return s
	}
	cut := maxMessageBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func missing(field string) error { return fmt.Errorf("missing %s", field) }
