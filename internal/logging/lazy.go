// Package logging holds what the operator's binaries put between controller-runtime and zap.
package logging

import "github.com/go-logr/logr"

// Lazy returns a logger whose WithValues only keeps its key/value pairs, and gives them to the
// underlying logger when a line is written. controller-runtime makes a logger with five to
// seven values for every reconcile and every admission request; zap encodes them the moment it
// is given them, which cost the manager 3 % of its CPU in a burst of 2,000 Buckets
// (docs/performance.md) for lines that, at the default level, are almost never written.
func Lazy(l logr.Logger) logr.Logger {
	sink := l.GetSink()
	if sink == nil {
		return l
	}
	// One frame more than the caller's: lazySink's own Info or Error.
	if withDepth, ok := sink.(logr.CallDepthLogSink); ok {
		sink = withDepth.WithCallDepth(1)
	}
	return logr.New(&lazySink{sink: sink})
}

// lazySink holds the values given to WithValues until a line is written. It is immutable, as
// a logr.LogSink must be: every With* returns a new one.
type lazySink struct {
	sink   logr.LogSink
	values []any
}

var (
	_ logr.LogSink          = (*lazySink)(nil)
	_ logr.CallDepthLogSink = (*lazySink)(nil)
)

// Init is called once, by logr.New, on the sink Lazy made; the underlying sink had its own.
func (s *lazySink) Init(logr.RuntimeInfo) {}

func (s *lazySink) Enabled(level int) bool { return s.sink.Enabled(level) }

func (s *lazySink) Info(level int, msg string, keysAndValues ...any) {
	s.withValues().Info(level, msg, keysAndValues...)
}

func (s *lazySink) Error(err error, msg string, keysAndValues ...any) {
	s.withValues().Error(err, msg, keysAndValues...)
}

// WithValues keeps the pairs after those already kept, in a slice of its own: two loggers made
// from one must not write into each other's values.
func (s *lazySink) WithValues(keysAndValues ...any) logr.LogSink {
	values := make([]any, 0, len(s.values)+len(keysAndValues))
	return &lazySink{sink: s.sink, values: append(append(values, s.values...), keysAndValues...)}
}

// WithName is passed on at once: a name is cheap to add, and zap keeps it apart from the values,
// so their order is unchanged.
func (s *lazySink) WithName(name string) logr.LogSink {
	return &lazySink{sink: s.sink.WithName(name), values: s.values}
}

func (s *lazySink) WithCallDepth(depth int) logr.LogSink {
	withDepth, ok := s.sink.(logr.CallDepthLogSink)
	if !ok {
		return s
	}
	return &lazySink{sink: withDepth.WithCallDepth(depth), values: s.values}
}

func (s *lazySink) withValues() logr.LogSink {
	if len(s.values) == 0 {
		return s.sink
	}
	return s.sink.WithValues(s.values...)
}
