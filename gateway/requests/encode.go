package requests

import (
	"encoding/json"
	"strconv"
)

// EncodeRequest writes {"id","name","args"}; nil args is null.
func EncodeRequest(id int64, name string, args json.RawMessage) ([]byte, error) {
	args, err := data(args)
	if err != nil {
		return nil, err
	}
	n, _ := json.Marshal(name) // a string always marshals
	b := appendID(make([]byte, 0, 32+len(n)+len(args)), id)
	b = append(b, `,"name":`...)
	b = append(b, n...)
	b = append(b, `,"args":`...)
	b = append(b, args...)
	return append(b, '}'), nil
}

// EncodeResult writes {"id","result"}; nil (JS undefined) is null. A value
// that is not JSON is ErrNotData.
func EncodeResult(id int64, v json.RawMessage) ([]byte, error) {
	return encodeValue(id, `,"result":`, v)
}

// EncodeProgress writes {"id","progress"}, as EncodeResult.
func EncodeProgress(id int64, v json.RawMessage) ([]byte, error) {
	return encodeValue(id, `,"progress":`, v)
}

// EncodeError writes {"id","error":{"reason","message","reasons"?}}.
func EncodeError(id int64, e ErrorBody) []byte {
	body, _ := json.Marshal(e) // strings always marshal
	b := appendID(make([]byte, 0, 24+len(body)), id)
	b = append(b, `,"error":`...)
	b = append(b, body...)
	return append(b, '}')
}

func encodeValue(id int64, key string, v json.RawMessage) ([]byte, error) {
	v, err := data(v)
	if err != nil {
		return nil, err
	}
	b := appendID(make([]byte, 0, 24+len(v)), id)
	b = append(b, key...)
	b = append(b, v...)
	return append(b, '}'), nil
}

func appendID(b []byte, id int64) []byte {
	b = append(b, `{"id":`...)
	return strconv.AppendInt(b, id, 10)
}

// data is v as a JSON value: null when empty, ErrNotData when not JSON.
func data(v json.RawMessage) (json.RawMessage, error) {
	if len(v) == 0 {
		return null, nil
	}
	if !json.Valid(v) {
		return nil, ErrNotData
	}
	return v, nil
}
