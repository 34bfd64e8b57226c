package objectstore

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Website is a bucket's static website configuration; the zero value is none.
type Website struct {
	// IndexDocument is the suffix served for a directory (index.html); ErrorDocument the key
	// served on a 4xx.
	IndexDocument, ErrorDocument string
	// RedirectAll sends every request to another host instead of serving objects.
	RedirectAll *WebsiteRedirect
	// RoutingRules redirect the requests their condition matches, the first that matches.
	RoutingRules []RoutingRule
}

// WebsiteRedirect is where a website sends every request: a host, and "http" or "https" (""
// keeps the request's).
type WebsiteRedirect struct {
	HostName, Protocol string
}

// RoutingRule redirects the requests that match its condition (the key prefix, the error code
// they would get; both empty: every request).
type RoutingRule struct {
	KeyPrefixEquals, HTTPErrorCodeReturnedEquals string
	HostName, Protocol, HTTPRedirectCode         string
	// ReplaceKeyPrefixWith and ReplaceKeyWith: nil leaves the key as it is; "" is a value.
	ReplaceKeyPrefixWith, ReplaceKeyWith *string
}

// IsZero reports whether w configures no website.
func (w Website) IsZero() bool { return reflect.DeepEqual(w, Website{}) }

// WebsiteEqual says whether two website configurations mean the same: no routing rules and an
// empty list are the same.
func WebsiteEqual(a, b Website) bool {
	if len(a.RoutingRules) == 0 && len(b.RoutingRules) == 0 {
		a.RoutingRules, b.RoutingRules = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

// Notification is one of a bucket's event notifications to a topic.
type Notification struct {
	// ID names it among the bucket's notifications.
	ID string
	// TopicARN is the topic it publishes to.
	TopicARN string
	// Events are S3 event types, s3:ObjectCreated:* and so on.
	Events []string
	// Prefix and Suffix filter the keys it is sent for; "" for none.
	Prefix, Suffix string
}

// NormalizeNotifications sorts notifications by id and each one's events, so that equal
// configurations compare equal whatever order a server answers in.
func NormalizeNotifications(ns []Notification) []Notification {
	out := make([]Notification, 0, len(ns))
	for _, n := range ns {
		n.Events = slices.Sorted(slices.Values(n.Events))
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b Notification) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// NotificationsEqual says whether two notification configurations mean the same.
func NotificationsEqual(a, b []Notification) bool {
	a, b = NormalizeNotifications(a), NormalizeNotifications(b)
	return slices.EqualFunc(a, b, func(x, y Notification) bool {
		return x.ID == y.ID && x.TopicARN == y.TopicARN && x.Prefix == y.Prefix && x.Suffix == y.Suffix && slices.Equal(x.Events, y.Events)
	})
}

func (s *store) Website(ctx context.Context, bucket string) (Website, error) {
	out, err := s.s3.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: aws.String(bucket)})
	if ErrorCode(err) == "NoSuchWebsiteConfiguration" {
		return Website{}, nil
	}
	if err != nil {
		return Website{}, classify(wrap("reading website of bucket", bucket, err))
	}
	w := Website{}
	if out.IndexDocument != nil {
		w.IndexDocument = aws.ToString(out.IndexDocument.Suffix)
	}
	if out.ErrorDocument != nil {
		w.ErrorDocument = aws.ToString(out.ErrorDocument.Key)
	}
	if r := out.RedirectAllRequestsTo; r != nil {
		w.RedirectAll = &WebsiteRedirect{HostName: aws.ToString(r.HostName), Protocol: string(r.Protocol)}
	}
	for _, r := range out.RoutingRules {
		w.RoutingRules = append(w.RoutingRules, fromSDKRoutingRule(r))
	}
	return w, nil
}

func fromSDKRoutingRule(r types.RoutingRule) RoutingRule {
	var out RoutingRule
	if c := r.Condition; c != nil {
		out.KeyPrefixEquals, out.HTTPErrorCodeReturnedEquals = aws.ToString(c.KeyPrefixEquals), aws.ToString(c.HttpErrorCodeReturnedEquals)
	}
	if d := r.Redirect; d != nil {
		out.HostName, out.Protocol, out.HTTPRedirectCode = aws.ToString(d.HostName), string(d.Protocol), aws.ToString(d.HttpRedirectCode)
		out.ReplaceKeyPrefixWith, out.ReplaceKeyWith = d.ReplaceKeyPrefixWith, d.ReplaceKeyWith
	}
	return out
}

func toSDKRoutingRule(r RoutingRule) types.RoutingRule {
	out := types.RoutingRule{Redirect: &types.Redirect{HostName: optional(r.HostName), Protocol: types.Protocol(r.Protocol),
		HttpRedirectCode: optional(r.HTTPRedirectCode), ReplaceKeyPrefixWith: r.ReplaceKeyPrefixWith, ReplaceKeyWith: r.ReplaceKeyWith}}
	if r.KeyPrefixEquals != "" || r.HTTPErrorCodeReturnedEquals != "" {
		out.Condition = &types.Condition{KeyPrefixEquals: optional(r.KeyPrefixEquals), HttpErrorCodeReturnedEquals: optional(r.HTTPErrorCodeReturnedEquals)}
	}
	return out
}

// optional is s as the SDK takes an optional string: nil for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

func (s *store) PutWebsite(ctx context.Context, bucket string, w Website) error {
	conf := &types.WebsiteConfiguration{}
	if w.IndexDocument != "" {
		conf.IndexDocument = &types.IndexDocument{Suffix: aws.String(w.IndexDocument)}
	}
	if w.ErrorDocument != "" {
		conf.ErrorDocument = &types.ErrorDocument{Key: aws.String(w.ErrorDocument)}
	}
	if r := w.RedirectAll; r != nil {
		conf.RedirectAllRequestsTo = &types.RedirectAllRequestsTo{HostName: aws.String(r.HostName), Protocol: types.Protocol(r.Protocol)}
	}
	for _, r := range w.RoutingRules {
		conf.RoutingRules = append(conf.RoutingRules, toSDKRoutingRule(r))
	}
	_, err := s.s3.PutBucketWebsite(ctx, &s3.PutBucketWebsiteInput{Bucket: aws.String(bucket), WebsiteConfiguration: conf})
	return classify(wrap("setting website of bucket", bucket, err))
}

func (s *store) DeleteWebsite(ctx context.Context, bucket string) error {
	_, err := s.s3.DeleteBucketWebsite(ctx, &s3.DeleteBucketWebsiteInput{Bucket: aws.String(bucket)})
	if ErrorCode(err) == "NoSuchWebsiteConfiguration" {
		return nil
	}
	return classify(wrap("deleting website of bucket", bucket, err))
}

func (s *store) Notifications(ctx context.Context, bucket string) ([]Notification, error) {
	out, err := s.s3.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(bucket)})
	if err != nil {
		return nil, classify(wrap("reading notifications of bucket", bucket, err))
	}
	var ns []Notification
	for _, t := range out.TopicConfigurations {
		n := Notification{ID: aws.ToString(t.Id), TopicARN: aws.ToString(t.TopicArn)}
		for _, e := range t.Events {
			n.Events = append(n.Events, string(e))
		}
		if t.Filter != nil && t.Filter.Key != nil {
			for _, r := range t.Filter.Key.FilterRules {
				// AWS answers "Prefix", RGW as it was written.
				switch strings.ToLower(string(r.Name)) {
				case "prefix":
					n.Prefix = aws.ToString(r.Value)
				case "suffix":
					n.Suffix = aws.ToString(r.Value)
				}
			}
		}
		ns = append(ns, n)
	}
	return NormalizeNotifications(ns), nil
}

// PutNotifications replaces the bucket's notifications; none removes them all. AWS replaces
// the whole set with a PUT. Ceph RGW (16.2, measured) adds the PUT's to those it has and
// refuses an empty one (MalformedXML), and removes one with its own DELETE ?notification=id:
// so the set is read back, and what the PUT left over is deleted that way.
func (s *store) PutNotifications(ctx context.Context, bucket string, ns []Notification) error {
	if len(ns) > 0 {
		if err := s.putNotifications(ctx, bucket, ns); err != nil {
			return err
		}
	} else if err := s.putNotifications(ctx, bucket, nil); ErrorCode(err) != "MalformedXML" {
		return err
	}
	have, err := s.Notifications(ctx, bucket)
	if err != nil {
		return err
	}
	for _, n := range have {
		if !slices.ContainsFunc(ns, func(w Notification) bool { return w.ID == n.ID }) {
			if err := s.deleteNotification(ctx, bucket, n.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteNotification is Ceph RGW's DELETE /bucket?notification=id, which the SDK lacks: the
// GET of the notification configuration, sent as a DELETE with the id, signed as such.
func (s *store) deleteNotification(ctx context.Context, bucket, id string) error {
	asDelete := func(stack *middleware.Stack) error {
		// Named as what it is, for the S3 metrics and whoever counts writes.
		if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("RGWDeleteNotificationName",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				ctx = awsmiddleware.SetOperationName(middleware.WithOperationName(ctx, "DeleteBucketNotification"), "DeleteBucketNotification")
				return next.HandleInitialize(ctx, in)
			}), middleware.Before); err != nil {
			return err
		}
		return stack.Serialize.Add(middleware.SerializeMiddlewareFunc("RGWDeleteNotification",
			func(ctx context.Context, in middleware.SerializeInput, next middleware.SerializeHandler) (middleware.SerializeOutput, middleware.Metadata, error) {
				if req, ok := in.Request.(*smithyhttp.Request); ok {
					req.Method, req.URL.RawQuery = http.MethodDelete, "notification="+url.QueryEscape(id)
				}
				return next.HandleSerialize(ctx, in)
			}), middleware.After)
	}
	_, err := s.s3.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(bucket)},
		s3.WithAPIOptions(asDelete))
	return classify(wrap(fmt.Sprintf("deleting notification %s of bucket", id), bucket, err))
}

func (s *store) putNotifications(ctx context.Context, bucket string, ns []Notification) error {
	conf := &types.NotificationConfiguration{}
	for _, n := range NormalizeNotifications(ns) {
		t := types.TopicConfiguration{Id: aws.String(n.ID), TopicArn: aws.String(n.TopicARN)}
		for _, e := range n.Events {
			t.Events = append(t.Events, types.Event(e))
		}
		var rules []types.FilterRule
		if n.Prefix != "" {
			rules = append(rules, types.FilterRule{Name: types.FilterRuleNamePrefix, Value: aws.String(n.Prefix)})
		}
		if n.Suffix != "" {
			rules = append(rules, types.FilterRule{Name: types.FilterRuleNameSuffix, Value: aws.String(n.Suffix)})
		}
		if rules != nil {
			t.Filter = &types.NotificationConfigurationFilter{Key: &types.S3KeyFilter{FilterRules: rules}}
		}
		conf.TopicConfigurations = append(conf.TopicConfigurations, t)
	}
	_, err := s.s3.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{
		Bucket: aws.String(bucket), NotificationConfiguration: conf})
	return classify(wrap("setting notifications of bucket", bucket, err))
}
