package fulltier

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
)

// StartMotoGlue starts a private moto (StartMoto) whose Glue catalog
// already holds database.
func StartMotoGlue(t testing.TB, database string) *Moto {
	t.Helper()
	m := StartMoto(t)
	if _, err := m.Glue().CreateDatabase(t.Context(), &glue.CreateDatabaseInput{
		DatabaseInput: &types.DatabaseInput{Name: aws.String(database)}}); err != nil {
		t.Fatalf("fulltier: creating Glue database %s on the private moto: %v", database, err)
	}
	return m
}

// Glue is a client of the server's Glue API with the credentials moto
// accepts when it does not check them ("t"/"t").
func (m *Moto) Glue() *glue.Client {
	return glue.New(glue.Options{Region: "us-east-1", BaseEndpoint: aws.String(m.Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("t", "t", "")})
}
