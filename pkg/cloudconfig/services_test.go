package cloudconfig

import "testing"

func TestCanonicalService(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		// SDK v2 service IDs (what upstream matches).
		{"EC2", ServiceEC2, true},
		{"Elastic Load Balancing", ServiceELB, true},
		{"Elastic Load Balancing v2", ServiceELBv2, true},
		{"STS", ServiceSTS, true},
		{"IAM", ServiceIAM, true},
		{"KMS", ServiceKMS, true},
		{"ec2imds", ServiceIMDS, true},
		{"Auto Scaling", ServiceAutoScaling, true},
		// SDK v1 endpoints IDs (what the in-tree provider matched).
		{"ec2", ServiceEC2, true},
		{"elasticloadbalancing", ServiceELB, true},
		{"sts", ServiceSTS, true},
		{"iam", ServiceIAM, true},
		{"kms", ServiceKMS, true},
		{"ec2metadata", ServiceIMDS, true},
		{"autoscaling", ServiceAutoScaling, true},
		// AWS_ENDPOINT_URL_<SERVICE> spelling, odd case and space.
		{"ELASTIC_LOAD_BALANCING_V2", ServiceELBv2, true},
		{"elastic-load-balancing", ServiceELB, true},
		{"  Ec2  ", ServiceEC2, true},
		{"elasticloadbalancingv2", ServiceELBv2, true},
		// Unknown.
		{"s3", "", false},
		{"elb", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := CanonicalService(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("CanonicalService(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	c := &Config{ServiceOverride: map[string]*ServiceOverride{
		"ec2-east":  {Service: "EC2", Region: "us-east-1", URL: "https://ec2.east", SigningRegion: "us-east-1", SigningName: "ec2"},
		"ec2-west":  {Service: "ec2", Region: "us-west-2", URL: "https://ec2.west", SigningRegion: "us-west-2"},
		"elb-v1":    {Service: "elasticloadbalancing", Region: "us-east-1", URL: "https://elb.v1", SigningRegion: "us-east-1"},
		"elb-west":  {Service: "Elastic Load Balancing", Region: "us-west-2", URL: "https://elb.west", SigningRegion: "us-west-2"},
		"elbv2-v1":  {Service: "elasticloadbalancing", Region: "eu-west-1", URL: "https://elb.eu", SigningRegion: "eu-west-1"},
		"elbv2-eu":  {Service: "Elastic Load Balancing v2", Region: "eu-west-1", URL: "https://elbv2.eu", SigningRegion: "eu-west-1"},
		"imds-b":    {Service: "ec2imds", Region: "us-west-2", URL: "http://imds.b", SigningRegion: "us-west-2"},
		"imds-a":    {Service: "ec2metadata", Region: "us-east-1", URL: "http://imds.a", SigningRegion: "us-east-1"},
		"unknown":   {Service: "s3", Region: "us-east-1", URL: "https://s3", SigningRegion: "us-east-1"},
		"sts-space": {Service: " STS ", Region: " us-east-1 ", URL: " https://sts ", SigningRegion: " us-east-1 "},
	}}
	tests := []struct {
		name, service, region           string
		url, signingRegion, signingName string
		ok                              bool
	}{
		{name: "v2 name, exact region", service: ServiceEC2, region: "us-east-1", url: "https://ec2.east", signingRegion: "us-east-1", signingName: "ec2", ok: true},
		{name: "v1 name in file", service: ServiceEC2, region: "us-west-2", url: "https://ec2.west", signingRegion: "us-west-2", ok: true},
		{name: "lookup by v1 name", service: "ec2", region: "us-west-2", url: "https://ec2.west", signingRegion: "us-west-2", ok: true},
		{name: "other region", service: ServiceEC2, region: "ap-south-1"},
		{name: "region is exact", service: ServiceEC2, region: "US-EAST-1"},
		{name: "v1 elb covers ELB", service: ServiceELB, region: "us-east-1", url: "https://elb.v1", signingRegion: "us-east-1", ok: true},
		{name: "v1 elb covers ELBv2 as in-tree", service: ServiceELBv2, region: "us-east-1", url: "https://elb.v1", signingRegion: "us-east-1", ok: true},
		{name: "v2 ELB name does not cover ELBv2", service: ServiceELBv2, region: "us-west-2"},
		{name: "specific ELBv2 wins over v1 elb", service: ServiceELBv2, region: "eu-west-1", url: "https://elbv2.eu", signingRegion: "eu-west-1", ok: true},
		{name: "IMDS exact region", service: ServiceIMDS, region: "us-west-2", url: "http://imds.b", signingRegion: "us-west-2", ok: true},
		{name: "IMDS without region takes the first by name", service: ServiceIMDS, region: "", url: "http://imds.a", signingRegion: "us-east-1", ok: true},
		{name: "IMDS other region", service: "ec2metadata", region: "eu-west-1", url: "http://imds.a", signingRegion: "us-east-1", ok: true},
		{name: "values are trimmed", service: ServiceSTS, region: "us-east-1", url: "https://sts", signingRegion: "us-east-1", ok: true},
		{name: "unknown service", service: "s3", region: "us-east-1"},
		{name: "no override", service: ServiceKMS, region: "us-east-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url, sr, sn, ok := c.Endpoint(tc.service, tc.region)
			if url != tc.url || sr != tc.signingRegion || sn != tc.signingName || ok != tc.ok {
				t.Errorf("Endpoint(%q, %q) = %q %q %q %v; want %q %q %q %v",
					tc.service, tc.region, url, sr, sn, ok, tc.url, tc.signingRegion, tc.signingName, tc.ok)
			}
		})
	}
	t.Run("nil and empty configs", func(t *testing.T) {
		var nilCfg *Config
		if _, _, _, ok := nilCfg.Endpoint(ServiceEC2, "us-east-1"); ok {
			t.Error("nil config matched")
		}
		if _, _, _, ok := (&Config{}).Endpoint(ServiceEC2, "us-east-1"); ok {
			t.Error("empty config matched")
		}
	})
}
