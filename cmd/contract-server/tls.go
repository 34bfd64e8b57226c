package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// certRecheck is how often the certificate files are looked at: a renewed certificate is served
// within a second, and a handshake costs at most two stats a second.
const certRecheck = time.Second

// certReloader serves the key pair in certFile and keyFile, loading it again when either file's
// modification time changes, so a renewed certificate (cert-manager rewrites its Secret) is
// served without a restart. A pair that fails to load (a half-written renewal) keeps the last
// good one until the files change again.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu              sync.Mutex
	cert            *tls.Certificate
	checked         time.Time
	certMod, keyMod time.Time
	lastErr         string
}

func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	c := &certReloader{certFile: certFile, keyFile: keyFile, log: log}
	if err := c.reload(); err != nil {
		return nil, err
	}
	c.checked = time.Now()
	return c, nil
}

// getCertificate is tls.Config.GetCertificate.
func (c *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.checked) >= certRecheck {
		c.checked = time.Now()
		if err := c.reload(); err != nil && err.Error() != c.lastErr {
			c.lastErr = err.Error()
			c.log.Error("Keeping the last TLS certificate", "error", err)
		}
	}
	return c.cert, nil
}

func (c *certReloader) reload() error {
	certMod, err := modTime(c.certFile)
	if err != nil {
		return err
	}
	keyMod, err := modTime(c.keyFile)
	if err != nil {
		return err
	}
	if c.cert != nil && certMod.Equal(c.certMod) && keyMod.Equal(c.keyMod) {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("loading TLS key pair: %w", err)
	}
	if c.cert != nil {
		c.log.Info("TLS certificate re-read", "file", c.certFile)
	}
	c.cert, c.certMod, c.keyMod, c.lastErr = &cert, certMod, keyMod, ""
	return nil
}

func modTime(path string) (time.Time, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}
