package faults

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/stack"
)

// The contract server's crash points are its own writes (to its records, and to versitygw's
// admin API), which the lab's tap numbers as it numbers the manager's: a crash run kills the
// server (SIGKILL, its own process) right after one of them, starts it again on its records,
// and lets the manager's retries finish. Beyond the oracle's checkpoints, every run ends with
// two checks of the server itself: every key pair of the S3 server is one its records hold live,
// and every idempotency key of the run, asked again, is answered as it was the first time.

// TestMain serves the stack's contract server when the test binary was started as it.
func TestMain(m *testing.M) {
	stack.ServeContractServerChild()
	os.Exit(m.Run())
}

// answers keeps the contract API's answers to the run's creations (a contract, a principal, a
// key pair), by path and idempotency key.
type answers struct {
	mu    sync.Mutex
	asked map[string]*creation
}

// creation is one creation the manager asked for: the request, to ask it again, and each answer
// it was given (the ids and key pairs it named).
type creation struct {
	path, key string
	body      []byte
	answered  []string
}

func (a *answers) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = map[string]*creation{}
}

// keep serves a request with serve, and keeps the answer when it is a creation's and a success.
func (a *answers) keep(w http.ResponseWriter, r *http.Request, serve func(http.ResponseWriter)) {
	key := r.Header.Get("Idempotency-Key")
	if r.Method != http.MethodPost || key == "" {
		serve(w)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	serve(rec)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	if rec.Code/100 != 2 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.asked[r.URL.Path+" "+key]
	if c == nil {
		c = &creation{path: r.URL.Path, key: key, body: body}
		a.asked[r.URL.Path+" "+key] = c
	}
	c.answered = append(c.answered, answerOf(rec.Body.Bytes()))
}

// answerOf is what an answer to a creation names: the id and the key pair (its secret hashed).
func answerOf(body []byte) string {
	var a struct {
		ID, AccessKeyID, SecretAccessKey string
		Credentials                      struct{ AccessKeyID, SecretAccessKey string }
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return "undecodable: " + err.Error()
	}
	key, secret := cmp.Or(a.Credentials.AccessKeyID, a.AccessKeyID), cmp.Or(a.Credentials.SecretAccessKey, a.SecretAccessKey)
	return fmt.Sprintf("id %q key %q secret %x", a.ID, key, sha256.Sum256([]byte(secret)))
}

// replay asks the server (behind the hook, so the tap numbers nothing) again for every
// creation of the run, as its client would after a crash, and keeps the answers. A principal or
// key pair deleted since (410), one of a principal deleted since (404) or of a cancelled
// contract (409) may be refused: its replay makes nothing.
func (a *answers) replay(api *stack.ContractAPI) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.asked {
		req := httptest.NewRequest(http.MethodPost, c.path, bytes.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+api.Token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", c.key)
		rec := httptest.NewRecorder()
		api.Server().ServeHTTP(rec, req)
		switch {
		case rec.Code/100 == 2:
			c.answered = append(c.answered, answerOf(rec.Body.Bytes()))
		case c.path != "/v1/contracts" && slices.Contains([]int{http.StatusNotFound, http.StatusConflict, http.StatusGone}, rec.Code):
		default:
			c.answered = append(c.answered, fmt.Sprintf("%d %s", rec.Code, rec.Body))
		}
	}
}

// answeredTwoWays lists the creations of the run whose answers named different ids or key
// pairs, or whose replay failed.
func (a *answers) answeredTwoWays() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, c := range a.asked {
		if ways := slices.Compact(slices.Clone(c.answered)); len(ways) > 1 {
			out = append(out, fmt.Sprintf("POST %s with Idempotency-Key %s was answered %d ways: %v", c.path, c.key, len(ways), ways))
		}
	}
	sort.Strings(out)
	return out
}

// atTheServer compares the key pairs the S3 server holds for contracts and principals with the
// contract server's records: a key pair that no live record has in effect (an active contract's,
// an active principal's of an active contract) is leaked; one in effect in the records but gone
// from the S3 server is lost. It returns those not found by an earlier run of the lab.
func (l *lab) atTheServer() (leaked, lost []string, err error) {
	lister, ok := l.stk.Backend.(contractserver.KeyLister)
	if !ok {
		return nil, nil, fmt.Errorf("the lab's backend %T lists no keys", l.stk.Backend)
	}
	keys, err := lister.Keys(l.ctx)
	if err != nil {
		return nil, nil, err
	}
	live, err := l.liveKeys()
	if err != nil {
		return nil, nil, err
	}
	at := map[string]bool{}
	for _, k := range keys {
		at[k.AccessKeyID] = true
		if live[k.AccessKeyID] == "" && l.firstSeen("leaked "+k.AccessKeyID) {
			leaked = append(leaked, fmt.Sprintf("key %s of %s: no live record", k.AccessKeyID, k.Owner))
		}
	}
	for key, whose := range live {
		if !at[key] && l.firstSeen("lost "+key) {
			lost = append(lost, fmt.Sprintf("key %s of %s: in effect in the records, not at the S3 server", key, whose))
		}
	}
	sort.Strings(leaked)
	sort.Strings(lost)
	return leaked, lost, nil
}

// liveKeys are the key pairs the contract server's records have in effect, with whose they are.
func (l *lab) liveKeys() (map[string]string, error) {
	contracts, err := l.stk.ContractAPI.Contracts()
	if err != nil {
		return nil, err
	}
	principals, err := l.stk.ContractAPI.Principals()
	if err != nil {
		return nil, err
	}
	live := map[string]string{}
	active := map[string]bool{}
	for _, c := range contracts {
		if c.State == "active" {
			active[c.ID] = true
			for _, k := range c.AccessKeyIDs {
				live[k] = "contract " + c.ID
			}
		}
	}
	for _, p := range principals {
		if p.State == "active" && active[p.ContractID] {
			for _, k := range p.AccessKeyIDs {
				live[k] = "principal " + p.ID + " of contract " + p.ContractID
			}
		}
	}
	return live, nil
}

// firstSeen reports whether the lab sees what for the first time.
func (l *lab) firstSeen(what string) bool {
	if l.reported[what] {
		return false
	}
	l.reported[what] = true
	return true
}

// checkServer ends a run with the checks of the contract server (its answers were asked for
// again at each checkpoint: settle): a divergence when a creation was answered two ways or a key
// in effect is gone from the S3 server, and the key pairs leaked there.
func (r *run) checkServer() (*divergence, []string) {
	diff := r.lab.answers.answeredTwoWays()
	leaked, lost, err := r.lab.atTheServer()
	if err != nil {
		r.t.Fatalf("comparing the S3 server's keys with the contract server's records: %v", err)
	}
	for _, l := range leaked {
		r.t.Errorf("%s: leaked at the S3 server: %s", r.p, l)
	}
	if diff = append(diff, lost...); len(diff) == 0 {
		return nil, leaked
	}
	return &divergence{p: r.p, step: workload[len(workload)-1].name, why: "the contract server's answers or records differ",
		diff: diff, log: r.saveLog()}, leaked
}
