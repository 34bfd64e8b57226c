// Command osm-demo is the demo application make dev's sample Application runs: it serves the
// objects of its linked Bucket over HTTP, so a person can see a link work with curl.
//
//	GET /          the bucket's keys, one per line (the first 1,000)
//	GET /KEY       the object KEY
//	GET /healthz   ok, without calling S3 (the readiness probe)
//
// It reads the link's variables as the operator injects them (linkclient); --link names the link
// when the Application has several.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/object-storage-manager/object-storage-manager/internal/linkclient"
)

// listLimit bounds the listing GET / returns.
const listLimit = 1000

func main() {
	link := flag.String("link", "", `the link's variable prefix ("PHOTOS"); by default the one link in the environment`)
	listen := flag.String("listen", ":8080", "address to serve on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, *link, *listen); err != nil {
		log.Fatalf("osm-demo: %v", err)
	}
}

func run(ctx context.Context, link, listen string) error {
	prefix, err := linkclient.Prefix(link, os.Environ())
	if err != nil {
		return err
	}
	b, err := linkclient.Link(ctx, os.Getenv, prefix)
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: listen, Handler: handler(b), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("osm-demo: serving bucket %s (%sBUCKET) on %s", b.Name, prefix, listen)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func handler(b linkclient.Bucket) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		out, err := b.Client.ListObjectsV2(r.Context(), &s3.ListObjectsV2Input{Bucket: aws.String(b.Name), MaxKeys: aws.Int32(listLimit)})
		if err != nil {
			fail(w, "listing", err)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, o := range out.Contents {
			_, _ = fmt.Fprintln(w, aws.ToString(o.Key))
		}
	})
	mux.HandleFunc("GET /{key...}", func(w http.ResponseWriter, r *http.Request) {
		out, err := b.Client.GetObject(r.Context(), &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String(r.PathValue("key"))})
		if err != nil {
			fail(w, "reading "+r.PathValue("key"), err)
			return
		}
		defer func() { _ = out.Body.Close() }()
		if out.ContentType != nil {
			w.Header().Set("Content-Type", *out.ContentType)
		}
		if out.ETag != nil {
			w.Header().Set("ETag", *out.ETag)
		}
		_, _ = io.Copy(w, out.Body)
	})
	return mux
}

// fail answers with the status S3's error code means, and the code: never the request's
// signature or key.
func fail(w http.ResponseWriter, what string, err error) {
	status, code := http.StatusBadGateway, "unreachable"
	var api smithy.APIError
	if errors.As(err, &api) {
		code = api.ErrorCode()
		switch {
		case code == "NoSuchKey" || code == "NotFound":
			status = http.StatusNotFound
		case code == "AccessDenied" || strings.HasPrefix(code, "InvalidAccessKey") || code == "SignatureDoesNotMatch":
			status = http.StatusForbidden
		}
	}
	log.Printf("osm-demo: %s: %v", what, err)
	http.Error(w, fmt.Sprintf("%s: %s", what, code), status)
}
