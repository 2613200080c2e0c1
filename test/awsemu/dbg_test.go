package awsemu

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

type tracedConn struct {
	net.Conn
	mu    *sync.Mutex
	stack *[]string
}

func (c tracedConn) Close() error {
	c.mu.Lock()
	*c.stack = append(*c.stack, string(debug.Stack()))
	c.mu.Unlock()
	return c.Conn.Close()
}

func TestDbgConn(t *testing.T) {
	for i := range 100 {
		f, _ := LoadFixture("testdata/demo.yaml")
		s, url, stop, err := Start(f)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		s.SetLogOutput(&buf)
		s.InjectFault(withRemaining(Throttle("ec2", 1), 2))
		var mu sync.Mutex
		var stacks []string
		tr := &http.Transport{DialContext: func(ctx context.Context, n, a string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, n, a)
			if err != nil {
				return nil, err
			}
			return tracedConn{c, &mu, &stacks}, nil
		}}
		c := ec2.NewFromConfig(sdkConfig(t), func(o *ec2.Options) { o.BaseEndpoint = aws.String(url); o.HTTPClient = &http.Client{Transport: tr} })
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err != nil {
				mu.Lock()
				stacks = append(stacks, "WROTE ERR: "+info.Err.Error())
				mu.Unlock()
			}
		}})
		_, err = c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
		if err != nil {
			mu.Lock()
			for _, s := range stacks {
				if len(s) < 300 {
					t.Log(s)
				}
			}
			mu.Unlock()
			t.Fatalf("iter %d: %v\nlog:\n%s", i, err, buf.String())
		}
		stop()
	}
}
