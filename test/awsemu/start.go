package awsemu

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// Starting an emulator for tests: StartT for a test, Serve (or Start) for
// a TestMain, which has no *testing.T; the demo fixture most tests seed it
// with; and the environment that points SDKs and child processes at it.

// Emulator is a Server serving on loopback.
type Emulator struct {
	*Server
	// URL is the base URL, http://127.0.0.1:PORT, of the APIs and of IMDS.
	URL  string
	stop func()

	closeMu sync.Mutex
	closers []func() // listeners IMDSFor added, closed by Close
	closed  bool
}

// Serve validates f (nil = empty us-east-1), then serves a new Server on
// 127.0.0.1 with a random port until Close.
func Serve(f *Fixture) (*Emulator, error) {
	if f != nil {
		f = f.clone()
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("awsemu: invalid fixture: %w", err)
		}
	}
	s := New(f)
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logf("awsemu: serve: %v", err)
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = hs.Close()
			<-done
		})
	}
	return &Emulator{Server: s, URL: "http://" + l.Addr().String(), stop: stop}, nil
}

// Close closes the listeners and open connections. It may be called more
// than once.
func (e *Emulator) Close() {
	e.stop()
	e.closeMu.Lock()
	closers := e.closers
	e.closers, e.closed = nil, true
	e.closeMu.Unlock()
	for _, c := range closers {
		c()
	}
}

// onClose runs c at Close, or at once when the emulator is closed already.
func (e *Emulator) onClose(c func()) {
	e.closeMu.Lock()
	if !e.closed {
		e.closers = append(e.closers, c)
		e.closeMu.Unlock()
		return
	}
	e.closeMu.Unlock()
	c()
}

// Start is Serve returning the server, its base URL and a stop function.
func Start(f *Fixture) (*Server, string, func(), error) {
	e, err := Serve(f)
	if err != nil {
		return nil, "", nil, err
	}
	return e.Server, e.URL, e.Close, nil
}

// StartT serves fixture (none: an empty us-east-1) for the rest of the
// test: the emulator stops at t's cleanup, and a fixture that does not
// validate fails the test.
func StartT(t testing.TB, fixture ...*Fixture) *Emulator {
	t.Helper()
	if len(fixture) > 1 {
		t.Fatalf("awsemu.StartT: %d fixtures, want at most one", len(fixture))
	}
	var f *Fixture
	if len(fixture) == 1 {
		f = fixture[0]
	}
	e, err := Serve(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

//go:embed testdata/demo.yaml
var demoYAML []byte

// DemoFixture returns a fresh copy of testdata/demo.yaml, the demo
// cluster "demo" in us-east-1 most tests run against: its VPC, subnets,
// security groups, instances (IMDS answers as i-0a1b2c3d4e5f60001) and
// IAM roles. Callers may change it before starting a server.
func DemoFixture() *Fixture {
	j, err := demoJSON()
	if err != nil {
		panic("awsemu: testdata/demo.yaml: " + err.Error())
	}
	var f Fixture
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		panic("awsemu: testdata/demo.yaml: " + err.Error())
	}
	if err := f.Validate(); err != nil {
		panic("awsemu: testdata/demo.yaml: " + err.Error())
	}
	return &f
}

// demoJSON is demo.yaml converted to JSON once: every DemoFixture call
// decodes its own copy (callers change it), and decoding the JSON costs a
// fraction of converting the YAML, which hundreds of tests did each time.
var demoJSON = sync.OnceValues(func() ([]byte, error) { return yaml.YAMLToJSONStrict(demoYAML) })

// Env is a process environment that points the AWS SDKs at an emulator.
type Env map[string]string

// Env points the AWS SDKs (v2, and v1 of the in-tree provider) at the
// emulator as on a machine off EC2: AWS_ENDPOINT_URL for every API,
// static dummy credentials, IMDS disabled, and nothing of the caller's AWS
// configuration (no config files, profile, session, role or container
// credentials).
func (e *Emulator) Env() Env { return EnvFor(e.URL) }

// EnvFor is Emulator.Env for an emulator served at url by another process
// (the aws-emulator binary the demo runs).
func EnvFor(url string) Env {
	return Env{
		"AWS_ENDPOINT_URL":                       url,
		"AWS_ACCESS_KEY_ID":                      DefaultAccessKeyID,
		"AWS_SECRET_ACCESS_KEY":                  "awsemu-secret",
		"AWS_SESSION_TOKEN":                      "",
		"AWS_EC2_METADATA_DISABLED":              "true",
		"AWS_CONFIG_FILE":                        os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE":            os.DevNull,
		"AWS_PROFILE":                            "",
		"AWS_ROLE_ARN":                           "",
		"AWS_WEB_IDENTITY_TOKEN_FILE":            "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI":     "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
	}
}

// IMDSEnv is Env as on an EC2 instance: IMDS is enabled and served by the
// emulator too.
func (e *Emulator) IMDSEnv() Env { return IMDSEnvFor(e.URL) }

// IMDSEnvFor is Emulator.IMDSEnv for an emulator served at url by another
// process.
func IMDSEnvFor(url string) Env {
	env := EnvFor(url)
	env["AWS_EC2_METADATA_DISABLED"] = "false"
	env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = url
	return env
}

// Set sets the variables for the rest of the test (t.Setenv: not in
// parallel tests).
func (env Env) Set(t testing.TB) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// List returns the variables as sorted KEY=VALUE pairs, for exec.Cmd.Env
// (appended to os.Environ(), they win over inherited values).
func (env Env) List() []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
