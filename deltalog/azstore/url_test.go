package azstore

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		in        string
		want      Options
		wantField string // of the *URLError
	}{
		{in: "abfss://lake@acct1.dfs.core.windows.net/warehouse/orders",
			want: Options{Account: "acct1", Container: "lake", Prefix: "warehouse/orders", Endpoint: "https://acct1.blob.core.windows.net"}},
		{in: "abfs://lake@acct1.dfs.core.windows.net/",
			want: Options{Account: "acct1", Container: "lake", Endpoint: "https://acct1.blob.core.windows.net"}},
		{in: "abfss://lake@acct1.blob.core.windows.net/t",
			want: Options{Account: "acct1", Container: "lake", Prefix: "t", Endpoint: "https://acct1.blob.core.windows.net"}},
		{in: "abfss://lake@acct1.dfs.core.chinacloudapi.cn/t",
			want: Options{Account: "acct1", Container: "lake", Prefix: "t", Endpoint: "https://acct1.blob.core.chinacloudapi.cn"}},
		{in: "abfss://My%20Workspace@onelake.dfs.fabric.microsoft.com/sales.Lakehouse/Tables/orders",
			want: Options{Account: "onelake", Container: "My Workspace", Prefix: "sales.Lakehouse/Tables/orders", Endpoint: "https://onelake.blob.fabric.microsoft.com"}},
		{in: "az://lake/warehouse/orders/", want: Options{Container: "lake", Prefix: "warehouse/orders"}},
		{in: "azure://lake", want: Options{Container: "lake"}},
		{in: "az://my-lake-2/t", want: Options{Container: "my-lake-2", Prefix: "t"}},
		{in: "az://$web/site", want: Options{Container: "$web", Prefix: "site"}},
		{in: "az://" + strings.Repeat("a", 63), want: Options{Container: strings.Repeat("a", 63)}},
		{in: "https://acct1.blob.core.windows.net/lake/warehouse/orders",
			want: Options{Account: "acct1", Container: "lake", Prefix: "warehouse/orders", Endpoint: "https://acct1.blob.core.windows.net"}},
		{in: "https://acct1.dfs.core.windows.net/lake",
			want: Options{Account: "acct1", Container: "lake", Endpoint: "https://acct1.blob.core.windows.net"}},

		{in: "s3://lake/x", wantField: "scheme"},
		{in: "/local/path", wantField: "scheme"},
		{in: "abfss://acct1.dfs.core.windows.net/t", wantField: "container"},
		{in: "abfss://lake@example.com/t", wantField: "host"},
		{in: "abfss://lake@acct1.queue.core.windows.net/t", wantField: "host"},
		{in: "abfss://lake@Bad_Account.dfs.core.windows.net/t", wantField: "account"},
		{in: "az:///t", wantField: "container"},
		{in: "az://user@lake/t", wantField: "container"},
		{in: "https://example.com/lake/t", wantField: "host"},
		{in: "https://acct1.blob.core.windows.net/", wantField: "container"},
		{in: "https://acct1.blob.core.windows.net/lake/t?sv=2024&sig=hidden", wantField: "query"},
		{in: "az://lake/t#frag", wantField: "query"},
		{in: "abfss://lake:hidden@acct1.dfs.core.windows.net/t", wantField: "credentials"},
		{in: "abfss://lake:hidden@acct1:port/t", wantField: "url"},
		{in: "az://qs/t", wantField: "container"}, // Azure answers 400 OutOfRangeInput
		{in: "az://" + strings.Repeat("a", 64) + "/t", wantField: "container"},
		{in: "abfss://Lake@acct1.dfs.core.windows.net/t", wantField: "container"},
		{in: "az://my--lake/t", wantField: "container"},
		{in: "az://-lake/t", wantField: "container"},
		{in: "az://lake-/t", wantField: "container"},
		{in: "az://my_lake/t", wantField: "container"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			o, err := ParseURL(tc.in)
			if tc.wantField != "" {
				var ue *URLError
				require.True(t, errors.As(err, &ue), "got %v", err)
				require.Equal(t, tc.wantField, ue.Field, "%v", err)
				require.NotContains(t, err.Error(), "hidden")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, o)
			require.True(t, IsURL(tc.in))
		})
	}
	require.False(t, IsURL("https://registry.example.com/x"))
	require.False(t, IsURL("s3://lake/x"))
	require.False(t, IsURL("/data/t"))
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		in       Options
		account  string
		endpoint string
		wantErr  string
	}{
		{name: "account", in: Options{Account: "acct1"}, account: "acct1", endpoint: "https://acct1.blob.core.windows.net"},
		{name: "azurite", in: Options{Endpoint: "http://127.0.0.1:10000/devstoreaccount1/"},
			account: "devstoreaccount1", endpoint: "http://127.0.0.1:10000/devstoreaccount1"},
		{name: "no account", in: Options{}, wantErr: "no storage account"},
		{name: "bad endpoint", in: Options{Endpoint: "ftp://x"}, wantErr: "not an http"},
		{name: "endpoint with password", in: Options{Endpoint: "http://u:hidden@127.0.0.1:1/a"}, wantErr: `"http://u:***@127.0.0.1:1/a" carries credentials`},
		{name: "endpoint with SAS", in: Options{Endpoint: "http://127.0.0.1:1/a?sig=hidden"}, wantErr: "has a query"},
		{name: "secret alone", in: Options{Account: "acct1", Credentials: Credentials{ClientSecret: "hidden"}}, wantErr: "tenant id and a client id"},
		{name: "negative timeout", in: Options{Account: "acct1", RequestTimeout: -1}, wantErr: "negative request timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.in
			err := o.validate()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.NotContains(t, err.Error(), "hidden")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.account, o.Account)
			require.Equal(t, tc.endpoint, o.Endpoint)
			require.Equal(t, DefaultMaxRetries, o.MaxRetries)
		})
	}
}

func TestCredentialsNeverPrint(t *testing.T) {
	for _, c := range []Credentials{
		{AccountKey: "hidden"}, {SASToken: "sv=1&sig=hidden"}, {TenantID: "t", ClientID: "c", ClientSecret: "hidden"}, {},
	} {
		o := Options{Account: "acct1", Credentials: c}
		for _, s := range []string{fmt.Sprintf("%v", o), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o), fmt.Sprint(c)} {
			require.NotContains(t, s, "hidden")
		}
	}
	require.Equal(t, "SAS token", Credentials{SASToken: "x"}.String())
}

func TestRootURL(t *testing.T) {
	require.Equal(t, "abfss://lake@acct1.dfs.core.windows.net/t/a", rootURL("https://acct1.blob.core.windows.net", "lake", "t/a"))
	require.Equal(t, "az://lake/t/a", rootURL("http://127.0.0.1:10000/devstoreaccount1", "lake", "t/a"))
}
