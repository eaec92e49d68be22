package lakegc_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
)

// Example shows the get-address → upload → link flow that keeps objects in
// flight safe from a GC: the service hands out a fresh address signed for where
// it will be linked, and links it at most once, before the link TTL runs out.
func Example() {
	ctx := context.Background()
	paths, err := pathprovider.New() // data/<slice>/<xid>, newest slice first
	if err != nil {
		panic(err)
	}
	signer, err := linkaddr.New([]byte("a secret key"), paths) // TTL 24h, lakeFS wire format
	if err != nil {
		panic(err)
	}
	once := linkaddr.NewMemRedeemer()

	// get-address: the client will upload its data to this physical address.
	signed := signer.Sign("repo1", "main", "tables/t/part-0.parquet", paths.NewPath())

	// link: the same repository, branch and path, once.
	address, err := signer.VerifyOnce(ctx, once, "repo1", "main", "tables/t/part-0.parquet", signed)
	fmt.Println("linked:", err == nil)
	_, err = signer.VerifyOnce(ctx, once, "repo1", "main", "tables/t/part-0.parquet", signed)
	fmt.Println("linked twice:", errors.Is(err, linkaddr.ErrInvalid))
	_, err = signer.Verify("repo1", "dev", "tables/t/part-0.parquet", signed)
	fmt.Println("linked on another branch:", errors.Is(err, linkaddr.ErrInvalid))

	// A GC skips slices newer than the link TTL: the address tells its age.
	a, err := pathprovider.Parse(address)
	fmt.Println("prefix:", a.Prefix, err)
	// Output:
	// linked: true
	// linked twice: true
	// linked on another branch: true
	// prefix: data <nil>
}
