package main

// control.go: the control API, HTTP with JSON bodies on the node's address (the harness
// reaches it from the host, as the clients reach the proxy):
//
//	GET    /stats            who passed (per client id: requests by API, its transactional
//	                         id, timeout, producer id and epoch), open connections
//	POST   /rules            install a rule (rules.go); answers its report, with its id
//	GET    /rules/{id}       a rule's report: what it held, for how long, what became of it
//	DELETE /rules/{id}       stop the rule; ?now=1 releases what it holds at once
//	DELETE /rules            stop every rule and release everything (the heal)
//	GET    /ends?since=T     the EndTxn requests that arrived since T (unix seconds)
//	GET    /markers?since=T  the transaction markers coordinators sent this broker since T

import (
	"encoding/json"
	"net/http"
	"strconv"
)

func (p *Proxy) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		answer(w, http.StatusOK, p.stats())
	})
	mux.HandleFunc("POST /rules", func(w http.ResponseWriter, req *http.Request) {
		var r Rule
		dec := json.NewDecoder(req.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			answer(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		rep, err := p.addRule(&r)
		if err != nil {
			answer(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		answer(w, http.StatusOK, rep)
	})
	mux.HandleFunc("GET /rules/{id}", func(w http.ResponseWriter, req *http.Request) {
		id, _ := strconv.Atoi(req.PathValue("id"))
		if rep, ok := p.report(id); ok {
			answer(w, http.StatusOK, rep)
			return
		}
		answer(w, http.StatusNotFound, map[string]string{"error": "no such rule"})
	})
	mux.HandleFunc("DELETE /rules/{id}", func(w http.ResponseWriter, req *http.Request) {
		id, _ := strconv.Atoi(req.PathValue("id"))
		if rep, ok := p.removeRule(id, req.URL.Query().Get("now") == "1"); ok {
			answer(w, http.StatusOK, rep)
			return
		}
		answer(w, http.StatusNotFound, map[string]string{"error": "no such rule"})
	})
	mux.HandleFunc("DELETE /rules", func(w http.ResponseWriter, _ *http.Request) {
		answer(w, http.StatusOK, p.removeAll())
	})
	mux.HandleFunc("GET /ends", func(w http.ResponseWriter, req *http.Request) {
		since, _ := strconv.ParseFloat(req.URL.Query().Get("since"), 64)
		answer(w, http.StatusOK, p.endsSince(since))
	})
	mux.HandleFunc("GET /markers", func(w http.ResponseWriter, req *http.Request) {
		since, _ := strconv.ParseFloat(req.URL.Query().Get("since"), 64)
		answer(w, http.StatusOK, p.markersSince(since))
	})
	return mux
}

func answer(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
