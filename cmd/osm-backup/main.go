// Command osm-backup is the backup image make dev's sample Application runs: the job the AWS CLI
// did in the sample, copying a linked Bucket's objects into a snapshot and back, in one static
// binary that runs as a non-root user with nothing else in the image.
//
//	osm-backup backup  [--link PHOTOS] [--from originals/]
//	osm-backup restore [--link PHOTOS] [--from originals/]
//
// backup copies every object of the link under --from to BACKUP_BUCKET under
// BACKUP_SNAPSHOT_PREFIX, with the backup's own key (AWS_*): a WriteOnly key, so it never lists
// or reads the backup Bucket, and each run writes new keys of its own. restore copies the
// snapshot in RESTORE_PREFIX back, listing it with the restore's ReadOnly key and writing with the
// link's. It is not restic: a restic repository is read, listed and locked by every run, which a
// WriteOnly key cannot do, and the design wants a leaked backup key unable to read a backup.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/object-storage-manager/object-storage-manager/internal/application"
	"github.com/object-storage-manager/object-storage-manager/internal/linkclient"
)

const usage = `usage: osm-backup backup|restore [--link PREFIX] [--from KEY-PREFIX] [--max-objects N]`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Environ(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "osm-backup:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv linkclient.Getenv, environ []string, out io.Writer) error {
	if len(args) == 0 || (args[0] != "backup" && args[0] != "restore") {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	link := fs.String("link", "", `the linked Bucket's variable prefix ("PHOTOS"); by default the one link in the environment`)
	from := fs.String("from", "", "copy only the link's objects under this key prefix")
	maxObjects := fs.Int("max-objects", 100_000, "refuse to copy more objects than this in one run")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New(usage)
	}
	prefix, err := linkclient.Prefix(*link, environ)
	if err != nil {
		return err
	}
	data, err := linkclient.Link(ctx, getenv, prefix)
	if err != nil {
		return err
	}
	backup, err := linkclient.Backup(ctx, getenv)
	if err != nil {
		return err
	}
	var c copier
	if args[0] == "backup" {
		snapshot := getenv(application.EnvBackupSnapshotPrefix)
		if snapshot == "" {
			return fmt.Errorf("%s is not set: run as an Application's backup", application.EnvBackupSnapshotPrefix)
		}
		c = copier{from: data, fromPrefix: *from, to: backup, toPrefix: snapshot + *from}
	} else {
		restore := getenv(application.EnvRestorePrefix)
		if restore == "" {
			return fmt.Errorf("%s is not set: run as an Application's restore", application.EnvRestorePrefix)
		}
		c = copier{from: backup, fromPrefix: restore + *from, to: data, toPrefix: *from}
	}
	c.maxObjects = *maxObjects
	n, size, err := c.run(ctx)
	_, _ = fmt.Fprintf(out, "%s: %d objects, %d bytes, s3://%s/%s -> s3://%s/%s\n", args[0], n, size,
		c.from.Name, c.fromPrefix, c.to.Name, c.toPrefix)
	return err
}

// snapshotKey is where an object of the source lands: its key with the source's prefix replaced
// by the target's.
func snapshotKey(key, fromPrefix, toPrefix string) string {
	return toPrefix + strings.TrimPrefix(key, fromPrefix)
}
