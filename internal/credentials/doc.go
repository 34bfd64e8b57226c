// Package credentials is the one lifecycle of a key pair the operator hands out: a Contract's
// account key and a BucketAccess's principal key go through the same steps, over an Issuer that
// is the contract API's account keys or a principal's keys:
//
//   - issue: the first key pair, from the resource's creation (replayed, with its idempotency
//     key, after a lost answer), goes into the Secret;
//   - rotate, when the rotation period has passed, the rotate-key annotation has a new value,
//     or the Secret lost the key (emptied or deleted by hand): the intent is recorded in status
//     (pendingKey, with the idempotency key every attempt asks with) before the provider is
//     asked; the new key is tried with itself (Issuer.Verify); only a key that works goes into
//     the Secret; then status names it and retires the key status named before, with an overlap;
//   - retire: a replaced key is revoked once its overlap has passed, never while the Secret
//     holds it;
//   - restore, where the provider holds one key per account and so cannot rotate: a Secret that
//     lost the key gets the same key back.
//
// The state lives in status (storagev1alpha1.KeyStatus), written before each step that depends
// on it, so a pass that stops anywhere is finished by the next and never issues a second key or
// revokes one in use. The Secret is written from that state and the key pair the pass holds;
// the only thing ever taken from it is the secret half of the key status names, which nothing
// else keeps.
package credentials
