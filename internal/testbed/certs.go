package testbed

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the certificates and keys of one control plane, as PEM, plus the
// files they were written to.
type pki struct {
	CACert, ServingCert, ServingKey, AdminCert, AdminKey, SAKey, SAPub []byte

	CACertFile, ServingCertFile, ServingKeyFile, SAKeyFile, SAPubFile string

	ca    *x509.Certificate // signs the certificates issued later (clientCert)
	caKey crypto.Signer
}

const certValidity = 7 * 24 * time.Hour

// newPKI generates, in dir: a CA; a serving certificate for 127.0.0.1, ::1,
// localhost and the in-cluster names of the kubernetes Service; an admin
// client certificate (CN=admin, O=system:masters); and the service-account
// token signing key pair. All keys are ECDSA P-256.
func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	now := time.Now().Add(-time.Hour) // tolerate small clock skew
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "testbed-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	p := &pki{CACert: pemBlock("CERTIFICATE", caDER), ca: ca, caKey: caKey}
	p.ServingCert, p.ServingKey, err = p.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 96, 0, 1)},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	})
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	p.AdminCert, p.AdminKey, err = p.clientCert("admin", []string{"system:masters"})
	if err != nil {
		return nil, fmt.Errorf("admin certificate: %w", err)
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if p.SAKey, err = encodeKey(saKey); err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}
	p.SAPub = pemBlock("PUBLIC KEY", pubDER)

	files := []struct {
		name string
		data []byte
		dst  *string
	}{
		{"ca.crt", p.CACert, &p.CACertFile},
		{"apiserver.crt", p.ServingCert, &p.ServingCertFile},
		{"apiserver.key", p.ServingKey, &p.ServingKeyFile},
		{"admin.crt", p.AdminCert, nil},
		{"admin.key", p.AdminKey, nil},
		{"sa.key", p.SAKey, &p.SAKeyFile},
		{"sa.pub", p.SAPub, &p.SAPubFile},
	}
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, f.data, 0o600); err != nil {
			return nil, err
		}
		if f.dst != nil {
			*f.dst = path
		}
	}
	return p, nil
}

// issue signs a certificate for a new ECDSA P-256 key with the CA; tmpl
// gives the subject, names and extended key usages.
func (p *pki) issue(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now().Add(-time.Hour) // tolerate small clock skew
	tmpl.SerialNumber = serial()
	tmpl.NotBefore, tmpl.NotAfter = now, now.Add(certValidity)
	if tmpl.NotAfter.After(p.ca.NotAfter) { // issued after the CA: end with it
		tmpl.NotAfter = p.ca.NotAfter
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, key.Public(), p.caKey)
	if err != nil {
		return nil, nil, err
	}
	kp, err := encodeKey(key)
	return pemBlock("CERTIFICATE", der), kp, err
}

// clientCert issues a client certificate: the apiserver authenticates it
// as user cn in groups orgs.
func (p *pki) clientCert(cn string, orgs []string) (certPEM, keyPEM []byte, err error) {
	return p.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: orgs},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func encodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pemBlock("PRIVATE KEY", der), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err)
	}
	return n
}
