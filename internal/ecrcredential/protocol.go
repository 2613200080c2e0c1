package ecrcredential

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	credv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
)

// The kubelet's exec plugin protocol (KEP-2133): the kubelet writes one
// CredentialProviderRequest as JSON on the plugin's stdin and reads one
// CredentialProviderResponse from its stdout, in the apiVersion the
// CredentialProviderConfig names. This plugin speaks v1 only
// (credentialprovider.kubelet.k8s.io/v1, GA since Kubernetes 1.26).

// Kinds of the protocol.
const (
	kindRequest  = "CredentialProviderRequest"
	kindResponse = "CredentialProviderResponse"
)

// codec decodes and encodes the v1 protocol objects: a scheme with the v1
// types only (no conversion from older versions) and a strict JSON
// serializer (unknown and duplicate fields are errors).
type codec struct {
	scheme     *runtime.Scheme
	serializer *json.Serializer
}

func newCodec() (*codec, error) {
	scheme := runtime.NewScheme()
	if err := credv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return &codec{
		scheme:     scheme,
		serializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Strict: true}),
	}, nil
}

// DecodeRequest decodes the kubelet's request strictly: it must be a
// credentialprovider.kubelet.k8s.io/v1 CredentialProviderRequest with only
// the fields v1 defines, and name an image.
func DecodeRequest(data []byte) (*credv1.CredentialProviderRequest, error) {
	c, err := newCodec()
	if err != nil {
		return nil, err
	}
	want := credv1.SchemeGroupVersion.WithKind(kindRequest)
	gvk, err := json.DefaultMetaFactory.Interpret(data)
	if err != nil {
		return nil, fmt.Errorf("request on stdin: not a JSON %s: %w", kindRequest, err)
	}
	if *gvk != want {
		return nil, fmt.Errorf("request on stdin: apiVersion %q kind %q: this plugin reads only apiVersion %s kind %s; set apiVersion: %s for it in the kubelet's CredentialProviderConfig",
			gvk.GroupVersion().String(), gvk.Kind, want.GroupVersion(), want.Kind, want.GroupVersion())
	}
	obj, _, err := c.serializer.Decode(data, &want, nil)
	if err != nil {
		return nil, fmt.Errorf("request on stdin: %w", err)
	}
	req, ok := obj.(*credv1.CredentialProviderRequest)
	if !ok {
		return nil, fmt.Errorf("request on stdin: decoded a %T, want a %s", obj, kindRequest)
	}
	if req.Image == "" {
		return nil, fmt.Errorf("request on stdin: the image is empty: the kubelet always names the image it pulls")
	}
	return req, nil
}

// EncodeResponse writes resp as the v1 JSON the kubelet reads, with its
// apiVersion and kind set.
func EncodeResponse(resp *credv1.CredentialProviderResponse) ([]byte, error) {
	c, err := newCodec()
	if err != nil {
		return nil, err
	}
	out := resp.DeepCopy()
	out.SetGroupVersionKind(schema.GroupVersionKind{Group: credv1.GroupName, Version: "v1", Kind: kindResponse})
	return runtime.Encode(c.serializer, out)
}
