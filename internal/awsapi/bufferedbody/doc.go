// Package bufferedbody hands net/http an in-memory copy of each request
// body, for the CCM's AWS clients and the emulator's in-process clients
// alike.
//
// Why: with a fast peer, net/http may still be finishing its write of the
// body when the response arrives and the SDK closes the body; net/http then
// drops the connection and the SDK sees "use of closed network connection"
// for a call that succeeded, and retries it (aws/aws-sdk-go-v2#2737). A
// retried call spends throttle budget and can repeat a mutation (and, in
// tests, is counted twice). The SDK's request bodies are small form posts,
// so copying them costs nothing.
package bufferedbody
