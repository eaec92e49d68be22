package linkaddr_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
)

func Example() {
	paths, err := pathprovider.New()
	if err != nil {
		panic(err)
	}
	signer, err := linkaddr.New([]byte("a secret key"), paths)
	if err != nil {
		panic(err)
	}

	// get-address: hand the client an address signed for where it will link.
	signed, err := signer.Sign("repo1", "main", "tables/events/part-0.parquet", paths.NewPath())
	if err != nil {
		panic(err)
	}

	// link: the client comes back with the signed address.
	link, err := signer.Verify("repo1", "main", "tables/events/part-0.parquet", signed)
	fmt.Println(err, strings.HasPrefix(link.Address, "data/"))

	_, err = signer.Verify("repo1", "main", "tables/other.parquet", signed)
	fmt.Println(errors.Is(err, linkaddr.ErrInvalid))
	// Output:
	// <nil> true
	// true
}

func ExampleSigner_Sign() {
	// A lakeFS address made 2021-06-01T12:34:56Z, and a clock one hour later.
	const address = "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"
	paths, _ := pathprovider.New()
	clock := func() time.Time { return time.Date(2021, 6, 1, 13, 34, 56, 0, time.UTC) }
	signer, err := linkaddr.New([]byte("lakefs-secret-for-tests"), paths, linkaddr.WithClock(clock))
	if err != nil {
		panic(err)
	}
	fmt.Println(signer.Sign("repo1", "main", "tables/a<b>&c,1.parquet", address))

	// A path taken from a request, with a byte that is not UTF-8.
	_, err = signer.Sign("repo1", "main", "tables/caf\xe9.csv", address)
	fmt.Println(err)
	// Output:
	// data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0,cPWPReDC_to7BOmMGSy0YReW9aWIv819XlODed5eSvw <nil>
	// linkaddr: sign: link address invalid: path is not valid UTF-8
}

func ExampleSplit() {
	// The stored address of an object linked in lakeFS.
	address, signature, ok := linkaddr.Split("data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0,cPWPReDC_to7BOmMGSy0YReW9aWIv819XlODed5eSvw")
	fmt.Println(address, signature, ok)
	_, _, ok = linkaddr.Split("data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0")
	fmt.Println(ok)
	// Output:
	// data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0 cPWPReDC_to7BOmMGSy0YReW9aWIv819XlODed5eSvw true
	// false
}

func ExampleSigner_Verify_expired() {
	const address = "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0" // made 2021-06-01T12:34:56Z
	paths, _ := pathprovider.New()
	clock := func() time.Time { return time.Date(2021, 6, 2, 13, 0, 0, 0, time.UTC) }
	signer, _ := linkaddr.New([]byte("key"), paths, linkaddr.WithClock(clock), linkaddr.WithTTL(24*time.Hour))

	signed, _ := signer.Sign("repo1", "main", "p", address)
	_, err := signer.Verify("repo1", "main", "p", signed)
	fmt.Println(errors.Is(err, linkaddr.ErrExpired))
	fmt.Println(err)
	// Output:
	// true
	// linkaddr: verify: link address expired: address made at 2021-06-01 12:34:56 +0000 UTC, and less than the staging margin 15m0s is left of its TTL 24h0m0s
}

func ExampleWithVerifyKeys() {
	paths, _ := pathprovider.New()
	oldSigner, _ := linkaddr.New([]byte("key of 2025"), paths)
	signed, _ := oldSigner.Sign("repo1", "main", "p", paths.NewPath())

	// After the rotation: sign with the new key, still accept the old one.
	signer, _ := linkaddr.New([]byte("key of 2026"), paths, linkaddr.WithVerifyKeys([]byte("key of 2025")))
	_, err := signer.Verify("repo1", "main", "p", signed)
	fmt.Println(err)
	// Output: <nil>
}

func ExampleSigner_VerifyOnce() {
	paths, _ := pathprovider.New()
	signer, _ := linkaddr.New([]byte("a secret key"), paths)
	redeemer := linkaddr.NewMemRedeemer()
	signed, _ := signer.Sign("repo1", "main", "p", paths.NewPath())

	_, err := signer.VerifyOnce(context.Background(), redeemer, "repo1", "main", "p", signed)
	fmt.Println(err)
	_, err = signer.VerifyOnce(context.Background(), redeemer, "repo1", "main", "p", signed)
	fmt.Println(err)
	// Output:
	// <nil>
	// linkaddr: redeem: link address invalid: address already linked
}

func ExampleSigner_Stage() {
	paths, _ := pathprovider.New()
	signer, _ := linkaddr.New([]byte("a secret key"), paths)
	signed, _ := signer.Sign("repo1", "main", "p", paths.NewPath())
	staging := map[string]string{} // the host's staging area of main

	link, err := signer.VerifyOnce(context.Background(), linkaddr.NewMemRedeemer(), "repo1", "main", "p", signed)
	if err != nil {
		panic(err)
	}
	err = signer.Stage(context.Background(), link,
		func(context.Context) error { staging["p"] = link.Address; return nil }, // the staging write
		func(context.Context) error { delete(staging, "p"); return nil })        // its undo, if it landed late
	fmt.Println(err, staging["p"] == link.Address, time.Until(link.Deadline) > linkaddr.StagingMargin)
	// Output: <nil> true true
}
