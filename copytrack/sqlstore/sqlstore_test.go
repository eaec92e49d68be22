package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"testing"
)

func TestSuccessor(t *testing.T) {
	for _, tt := range []struct{ prefix, want []byte }{
		{nil, nil},
		{[]byte{}, nil},
		{[]byte("a"), []byte("b")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("a\xff\xff"), []byte("b")},
		{[]byte("a\x00"), []byte("a\x01")},
		{[]byte("\xff"), nil},
		{[]byte("\xff\xff"), nil},
		{[]byte("\xfe\xff"), []byte("\xff")},
	} {
		got := successor(tt.prefix)
		if !bytes.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("successor(%q) = %q, want %q", tt.prefix, got, tt.want)
		}
	}
}

func TestNewRejectsBadTableNames(t *testing.T) {
	db := sql.OpenDB(nil) // never used: the name is checked first
	for _, name := range []string{"", "1t", "t;drop table x", `"t"`, "a.b.c", "t-1", "t t"} {
		if _, err := New(context.Background(), db, name); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("New(%q) = %v, want ErrInvalidInput", name, err)
		}
	}
}

func TestNewRejectsNilDBAndNilOption(t *testing.T) {
	if _, err := New(context.Background(), nil, "copytrack", WithCreateTable()); err == nil {
		t.Error("New accepted a nil *sql.DB")
	}
	db := sql.OpenDB(nil) // never used: the options are checked first
	if _, err := New(context.Background(), db, "copytrack", nil, WithCreateTable()); err == nil {
		t.Error("New accepted a nil Option")
	}
}
