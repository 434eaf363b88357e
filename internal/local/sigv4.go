package local

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
)

// IAMKey is an access key baton dev accepts under /iam/ and the IAM
// principal it stands for (what API Gateway would learn from IAM).
type IAMKey struct {
	Secret string
	ARN    string
}

// SigV4 verifies Signature Version 4 requests as API Gateway's AWS_IAM
// authorization does, with access keys configured locally (baton dev
// --iam-key) instead of IAM's: the canonical request of the headers the
// caller signed, its payload hash, a credential scope for the
// execute-api service in the API's region, and a date within five
// minutes. Temporary credentials (X-Amz-Security-Token) are not known
// locally.
type SigV4 struct {
	Keys map[string]IAMKey // by access key id
	// Region is the API's region (default us-east-1): a signature scoped
	// to another is refused, as API Gateway refuses it.
	Region string
	Now    func() time.Time
}

// sigV4MaxSkew is how far a request's X-Amz-Date may be from now.
const sigV4MaxSkew = 5 * time.Minute

// Verify checks r's signature over body and returns the caller's access
// key and principal ARN; the error says what API Gateway would.
func (v *SigV4) Verify(r *http.Request, body []byte) (accessKey, arn string, err error) {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return "", "", fmt.Errorf("Missing Authentication Token")
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		fields[k] = val
	}
	cred, signed, sig := fields["Credential"], fields["SignedHeaders"], fields["Signature"]
	scope := strings.Split(cred, "/")
	if len(scope) != 5 || scope[4] != "aws4_request" || signed == "" || sig == "" {
		return "", "", fmt.Errorf("Authorization header requires Credential, SignedHeaders and Signature")
	}
	if scope[3] != "execute-api" {
		return "", "", fmt.Errorf("Credential should be scoped to correct service: 'execute-api'")
	}
	if region := cmp.Or(v.Region, "us-east-1"); scope[2] != region {
		return "", "", fmt.Errorf("Credential should be scoped to a valid region, not '%s'. (this API is in %s)", scope[2], region)
	}
	key, ok := v.Keys[scope[0]]
	if !ok {
		return "", "", fmt.Errorf("The security token included in the request is invalid")
	}
	if r.Header.Get("X-Amz-Security-Token") != "" {
		return "", "", fmt.Errorf("The security token included in the request is invalid (baton dev knows no temporary credentials)")
	}
	amzDate := r.Header.Get("X-Amz-Date")
	at, perr := time.Parse("20060102T150405Z", amzDate)
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	if perr != nil || !strings.HasPrefix(amzDate, scope[1]) {
		return "", "", fmt.Errorf("Authorization header requires existence of a valid X-Amz-Date")
	}
	if d := now().Sub(at); d > sigV4MaxSkew || d < -sigV4MaxSkew {
		return "", "", fmt.Errorf("Signature expired: %s is not within five minutes of now", amzDate)
	}
	names := strings.Split(signed, ";")
	if !sort.StringsAreSorted(names) || !slices.Contains(names, "host") || !slices.Contains(names, "x-amz-date") {
		return "", "", fmt.Errorf("SignedHeaders must be sorted and include host and x-amz-date")
	}
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != payload {
		return "", "", fmt.Errorf("The request body does not match its X-Amz-Content-Sha256")
	}
	var canon strings.Builder
	canon.WriteString(r.Method + "\n" + escapeSigV4(r.URL.EscapedPath(), false) + "\n" + canonicalQuery(r.URL.Query()) + "\n")
	for _, n := range names {
		vals := r.Header.Values(n)
		if n == "host" {
			vals = []string{r.Host}
		}
		trimmed := make([]string, len(vals)) // the request's own headers stay as sent
		for i, v := range vals {
			trimmed[i] = strings.Join(strings.Fields(v), " ")
		}
		canon.WriteString(n + ":" + strings.Join(trimmed, ",") + "\n")
	}
	canon.WriteString("\n" + signed + "\n" + payload)
	creq := sha256.Sum256([]byte(canon.String()))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + strings.Join(scope[1:], "/") + "\n" + hex.EncodeToString(creq[:])
	k := []byte("AWS4" + key.Secret)
	for _, s := range scope[1:] {
		k = hmacSHA256(k, s)
	}
	want := hex.EncodeToString(hmacSHA256(k, toSign))
	if subtle.ConstantTimeCompare([]byte(want), []byte(sig)) != 1 {
		return "", "", fmt.Errorf("The request signature we calculated does not match the signature you provided")
	}
	return scope[0], key.ARN, nil
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalQuery is the query sorted by name, then value, each encoded.
func canonicalQuery(q url.Values) string {
	var pairs []string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, escapeSigV4(k, true)+"="+escapeSigV4(v, true))
		}
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

// escapeSigV4 percent-encodes every byte but the unreserved characters
// (and '/', in a path). A path is encoded once more over its escaped
// form, as SigV4 asks of every service but S3.
func escapeSigV4(s string, query bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~', c == '/' && !query:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
