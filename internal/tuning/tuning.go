// Package tuning holds every number the operator was tuned with: how long it waits, how much it
// keeps, how many it runs at once. Each says what it trades and the measurement that chose it,
// so a change starts from the figure it moves, and `make bench-scale` (docs/performance.md) can
// show whether the change did.
package tuning

import "time"

// Workers is the manager's default --max-concurrent-reconciles. make bench-scale N=1000
// (-ack=off, quiet machine): 16 workers 20.5 s to all Ready, 32 workers 17.2 s, 64 workers
// 16.8 s with 5 MiB more heap: 32 is the knee.
const Workers = 32

// GCPercent is the manager's GOGC unless the environment sets one. The heap grows with the
// objects in the cache; collecting at half again the live size, not twice, cut the peak heap at
// 1,000 Buckets from 37 to 30 MiB (RSS 70 to 61 MiB) with manager CPU unchanged (6.0 s).
// What a collection does to goroutine stacks is set apart, in the Deployment's GODEBUG
// (config/manager/manager.yaml), which the runtime reads only at start.
const GCPercent = 50

// ResyncJitter is the share of the resync period added at random to each Bucket's next resync.
// Buckets reconciled in the same moment (a burst, a restart of the manager, which passes over
// every Bucket at once) would otherwise come back in the same moment every period, forever.
// Steady state at N=100 stayed 2.0 S3 reads and 0 writes per Bucket per resync: jitter changes
// when, not what.
const ResyncJitter = 0.1

// ResyncBudget is the manager's default --resync-budget: the provider calls a second that
// drift detection (checks of Ready Buckets that nothing woke) may make, in all. On the 2-core
// machine of docs/performance.md, Ceph RGW answered the S3 mix of a burst at 328 calls/s at
// best, versitygw at 2,463/s: 20/s is 6 % of the slower, and drift detection never takes a
// provider's capacity from its users. At the 2 reads a check costs, it checks 6,000 Buckets every
// 10 minutes, or 28,800 calm ones every hour (ResyncMaxPeriod; calm ones book ResyncCalmShare
// of it); without it the steady state at N=10,000 peaked at 310 S3 calls in one second.
const ResyncBudget = 20.0

// ResyncBudgetPerContract is the default --resync-budget-per-contract: a quarter of
// ResyncBudget, so one account's thousands of Buckets take at most a quarter of it, and four
// Contracts must each want more than their share before another Contract's Buckets wait. At 2
// reads a check: 1,500 Buckets of one Contract every 10 minutes, 7,200 calm ones every hour.
const ResyncBudgetPerContract = 5.0

// ResyncMaxPeriod is the default --resync-max-period: the longest a calm Bucket waits between
// checks while the budget has room. A Bucket checked calm doubles its period (10, 20, 40
// minutes) and reaches it after three calm checks; drift is then found within the hour, ten
// times sooner than ACK's 10-hour resync, at a sixth of the calls of checking every 10 minutes.
const ResyncMaxPeriod = time.Hour

// ResyncCalmShare is the part of each second of the budget that calm Buckets may book: the
// rest is kept for Buckets that changed, drifted or failed at their last check, which are then
// checked on time (the resync period) even when calm ones wait longer than theirs.
// internal/resyncbudget's TestAChangedResourceIsCheckedSooner shows it with the budget full.
const ResyncCalmShare = 0.8

// BucketChurnSettle is how long a Contract waits, after a Bucket naming it comes, goes or
// changes, before it looks at its Buckets again; what lands meanwhile is seen in that one pass.
// Woken at once, 1,000 Buckets over 10 Contracts cost 777 Contract passes (O(N²/Contracts)
// Buckets listed in all) and 50 to 68 writes of InUse. InUse lags by up to this long; nothing
// waits on it, since a Contract's deletion asks the API server which Buckets still name it.
const BucketChurnSettle = time.Second

// WaitingRetry is how often a resource that waits on something no watch reports looks again
// (objects in a bucket to delete, a bucket name another account holds, a Secret of someone
// else's under the name it needs), or every resync period if that is shorter. A minute keeps a
// blocked deletion responsive to a user's fix without polling the server more than once a
// minute per blocked resource.
const WaitingRetry = time.Minute

// ConflictRetry is how soon a pass that lost a write race (409), or that found its cache behind
// its own last write, runs again: the newer object is on its way through the watch, usually
// within milliseconds.
const ConflictRetry = time.Second

// CacheBehindRetry is how soon a pass that found the cache still behind the write its own last
// pass made looks again, instead of acting on the older object. A watch usually delivers a
// write within milliseconds of it (the API server sends it as soon as etcd commits); a tenth of
// a second is past that in most cases, without holding a worker the way a blocking wait did, and
// a cache further behind costs another tenth, not a failed pass.
const CacheBehindRetry = 100 * time.Millisecond

// NewKeyRetry is how soon a new key the S3 endpoint refused is tried again: a server may take a
// moment before a key it just made works everywhere (Ceph RGW's user cache, seen at up to 2 s).
const NewKeyRetry = 5 * time.Second

// PolicyWait is how soon a key whose access the bucket policy does not carry yet is checked
// again: the Bucket's controller is adding the statement (a pass of its own, about 50 ms here),
// and nothing the BucketAccess watches says when a server starts honouring it.
const PolicyWait = 2 * time.Second

// ForeignRetry is how often an Application whose child's name is taken by someone else's
// object looks again: that object is not owned, so no watch reports when it goes.
const ForeignRetry = time.Minute

// BackupsListInterval is how often the snapshots in a backup bucket are listed again when no
// backup run has finished since: listing costs S3 calls, and an Application is reconciled on
// every change of its children.
const BackupsListInterval = 5 * time.Minute

// MaxStores bounds the S3 clients kept, one per endpoint and key pair: rotated keys leave
// entries behind. Keeping one per Contract's account took N=1000 from 213 s to 76 s (manager CPU
// 11.8 to 9.2 s) against building one every pass; 1,024 accounts is far above a cluster's.
const MaxStores = 1024

// MaxS3Answer is the most the manager reads of one S3 answer: a bucket's configuration (ACL,
// lifecycle, CORS, notifications, ...) is a few KiB, and AWS's largest (1,000 lifecycle rules)
// about 500 KiB. With every worker reading one at once, 32 MiB at most is in flight, well under
// the manager's 256 MiB limit, whatever a tenant's endpoint sends.
const MaxS3Answer = 1 << 20

// MaxS3ListAnswer is the most read of one page of a listing (buckets, objects): ListBuckets
// pages hold up to 10,000 names at AWS, about 2 MiB; the manager asks object listings for far
// fewer keys.
const MaxS3ListAnswer = 8 << 20

// MaxPolicyAnswer is the most read of a bucket policy: AWS allows 20 KiB; other servers take
// longer policies, and a composed policy (the spec's and a statement set per BucketAccess) may
// be, so six times that, about 250 BucketAccesses on one bucket.
const MaxPolicyAnswer = 128 << 10

// MaxContractAPIAnswer is the most read of one answer of the contract API: its largest, a
// listing of a contract's principals or usage, is a few KiB per hundred entries.
const MaxContractAPIAnswer = 1 << 20

// PassBudget bounds the steps of one pass of a Contract, Bucket or BucketAccess, every call to
// the provider included: an endpoint that accepts connections and never answers holds a worker
// this long at most (and internal/fairqueue holds its namespace to a small share of them). A pass
// against servers that answer takes milliseconds to a few seconds (a new key is waited for in
// steps of PolicyWait); one S3 call may take --s3-timeout (30 s) per attempt, so a minute lets a
// slow call retry once and still ends a pass that only a hostile server would make longer.
const PassBudget = time.Minute

// EmptyBatchesPerPass bounds the DeleteObjects batches (1,000 versions each) one pass of a Bucket
// that empties its bucket sends, so one tenant's large bucket holds a worker for a bounded time
// and its progress is recorded in between. Not measured: ten batches against versitygw take well
// under a second, a tenth of PassBudget's share for a slow server.
const EmptyBatchesPerPass = 10

// EmptyingRetry is how soon a Bucket whose emptying stopped at EmptyBatchesPerPass goes on.
const EmptyingRetry = time.Second

// TokenExpiration is how long the ServiceAccount token projected into a keyless Application's
// pods lives. The kubelet renews a projected token at 80 % of its life, and the AWS SDKs read
// the file again each time their STS credentials (an hour by default) run out, so a stolen token
// is worth at most this long. An hour is the kubelet's own default and what EKS projects; the
// API server refuses less than ten minutes.
const TokenExpiration = time.Hour
