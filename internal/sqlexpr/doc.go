// Package sqlexpr parses, types and evaluates the SQL expressions of UPDATE and DELETE
// statements (Spark SQL syntax) over the rows of a Delta table, without Spark.
//
// Three steps, each with typed errors that carry the byte position in the expression:
//
//   - Parse: a hand-written Pratt parser turns the text into an AST ([Node]): literals,
//     column references (backticks quote names such as `Unit Price`), arithmetic, ||,
//     comparisons (including <=>), AND/OR/NOT, IN, BETWEEN, [I]LIKE ... ESCAPE, IS [NOT]
//     NULL/TRUE/FALSE/DISTINCT FROM, CASE, CAST and a few functions (COALESCE, NULLIF,
//     IFNULL, NVL, CONCAT, LOWER, UPPER, TRIM, LENGTH, ABS).
//   - Bind: [BindPredicate] and [BindAssignment] resolve columns against a Delta schema
//     (without regard to case, as Spark does) and type every node by Spark's rules:
//     integer literals are INT, BIGINT or DECIMAL by size, 1.5 is DECIMAL(2,1), 1.5D a
//     DOUBLE; a string literal beside a typed column is read as that type (a date, a
//     timestamp in UTC), except beside a number, where Spark's ANSI coercion reads it
//     as a BIGINT (integral types) or a DOUBLE (decimals, floats); FLOAT beside any
//     other number is DOUBLE; decimal arithmetic has Spark's precision and scale; div
//     is integral division to BIGINT. Where Spark's result depends on a setting or on formatting we do not
//     reproduce (a string column compared with a number, a double cast to a string),
//     binding refuses with an error instead of computing something else.
//   - Eval: three-valued logic over rows in the datafile package's Go conventions; NULL
//     never matches. Overflow, division by zero and invalid casts fail as Spark's ANSI
//     mode fails them, with an [Error] of kind [ErrEval] naming the position.
//
// [Predicate.MayMatch] prunes files: from partition values and min/max/null-count
// statistics it tells files in which no row can match.
//
// The package carries no API-stability promise.
package sqlexpr
