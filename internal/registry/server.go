package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ErrStarted is returned by Start on a registry that is already serving.
var ErrStarted = errors.New("registry: already started")

// Start serves the registry on addr (use "127.0.0.1:0" for any free port)
// until Close. ctx bounds only the listen; use [Registry.URL] for the address.
func (r *Registry) Start(ctx context.Context, addr string) error {
	r.srv.Lock()
	defer r.srv.Unlock()
	if r.srv.server != nil {
		return ErrStarted
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: r.handler, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.logger.Error("schema registry stopped", "err", err)
		}
	}()
	r.srv.server, r.srv.ln, r.srv.done = srv, ln, done
	r.logger.Info("schema registry listening", "url", "http://"+ln.Addr().String())
	return nil
}

// URL is the base URL of a started registry, e.g. http://127.0.0.1:40123,
// or "" before Start.
func (r *Registry) URL() string {
	r.srv.Lock()
	defer r.srv.Unlock()
	if r.srv.ln == nil {
		return ""
	}
	return "http://" + r.srv.ln.Addr().String()
}

// Close stops a started registry and waits for its server goroutine. It is
// safe to call more than once and on a registry that never started.
func (r *Registry) Close() error {
	r.srv.Lock()
	defer r.srv.Unlock()
	if r.srv.server == nil {
		return nil
	}
	err := r.srv.server.Close()
	<-r.srv.done
	r.srv.server, r.srv.ln, r.srv.done = nil, nil, nil
	if err != nil {
		return fmt.Errorf("closing schema registry: %w", err)
	}
	return nil
}
