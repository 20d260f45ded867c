// A no-op ext_proc server: the floor of the design for bench/transport.ts. It answers request headers the way the
// engine's pass-through does (CONTINUE with one header mutation, x-request-id) and every other message with an
// empty CONTINUE, using the stock go-control-plane types and grpc-go. A benchmark dependency only.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

type server struct {
	extproc.UnimplementedExternalProcessorServer
}

// requestID is a random UUID v4, as the engine's pass-through adds when the client sent none.
func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func hasHeader(headers *core.HeaderMap, name string) bool {
	for _, header := range headers.GetHeaders() {
		if header.GetKey() == name {
			return true
		}
	}
	return false
}

func (server) Process(stream extproc.ExternalProcessor_ProcessServer) error {
	for {
		request, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		response := &extproc.ProcessingResponse{}
		switch message := request.Request.(type) {
		case *extproc.ProcessingRequest_RequestHeaders:
			mutation := &extproc.HeaderMutation{}
			if !hasHeader(message.RequestHeaders.GetHeaders(), "x-request-id") {
				mutation.SetHeaders = []*core.HeaderValueOption{{
					Header:       &core.HeaderValue{Key: "x-request-id", RawValue: []byte(requestID())},
					AppendAction: core.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
				}}
			}
			response.Response = &extproc.ProcessingResponse_RequestHeaders{
				RequestHeaders: &extproc.HeadersResponse{Response: &extproc.CommonResponse{
					Status:         extproc.CommonResponse_CONTINUE,
					HeaderMutation: mutation,
				}},
			}
		case *extproc.ProcessingRequest_RequestBody:
			response.Response = &extproc.ProcessingResponse_RequestBody{RequestBody: &extproc.BodyResponse{}}
		case *extproc.ProcessingRequest_ResponseHeaders:
			response.Response = &extproc.ProcessingResponse_ResponseHeaders{ResponseHeaders: &extproc.HeadersResponse{}}
		case *extproc.ProcessingRequest_ResponseBody:
			response.Response = &extproc.ProcessingResponse_ResponseBody{ResponseBody: &extproc.BodyResponse{}}
		case *extproc.ProcessingRequest_RequestTrailers:
			response.Response = &extproc.ProcessingResponse_RequestTrailers{RequestTrailers: &extproc.TrailersResponse{}}
		case *extproc.ProcessingRequest_ResponseTrailers:
			response.Response = &extproc.ProcessingResponse_ResponseTrailers{ResponseTrailers: &extproc.TrailersResponse{}}
		}
		if err := stream.Send(response); err != nil {
			return err
		}
	}
}

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 0, "port to listen on (0: any free port)")
	flag.Parse()
	listener, err := net.Listen("tcp", fmt.Sprintf("%s:%d", *host, *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	grpcServer := grpc.NewServer()
	extproc.RegisterExternalProcessorServer(grpcServer, server{})
	// Envoy's engine cluster health-checks this service name, as it does for the engine.
	healthServer := health.NewServer()
	healthServer.SetServingStatus("envoy.service.ext_proc.v3.ExternalProcessor", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(grpcServer, healthServer)
	// The benchmark reads the port from the first line.
	fmt.Println(listener.Addr().(*net.TCPAddr).Port)
	if err := grpcServer.Serve(listener); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
