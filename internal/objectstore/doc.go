// Package objectstore is the operator's narrow view of an S3 endpoint: the few bucket calls the
// Bucket controller makes (Store, over aws-sdk-go-v2), and the pure functions that decide when
// an ACL or a policy really differs from what the spec asks for.
//
// Servers disagree in how they spell the same ACL (versitygw names the AllUsers group
// "all-users" instead of its URI; AWS turns e-mail grantees into canonical ids) and how they
// format a policy, so everything is compared in a normal form, never as sent.
package objectstore
