%% mandelbrot (Computer Language Benchmarks Game), written from the
%% published algorithm: an N x N portable bitmap (PBM, P4) of the Mandelbrot
%% set over [-1.5, 0.5] x [-1, 1]; a point is in the set when |z| stays
%% within 2 for 50 iterations. Each row is computed in its own process.
%% Run: erlc mandelbrot.erl && erl -noshell -s mandelbrot main 200 -s init stop > out.pbm
-module(mandelbrot).
-export([main/1]).

-define(ITER, 50).

main([Arg]) when is_atom(Arg) -> main([atom_to_list(Arg)]);
main([Arg]) ->
    N = list_to_integer(Arg),
    Parent = self(),
    Pids = [spawn(fun() -> Parent ! {self(), row(Y, N)} end) || Y <- lists:seq(0, N - 1)],
    Rows = [receive {P, Row} -> Row end || P <- Pids],
    {ok, Out} = file:open("/dev/stdout", [write, raw, binary]),
    ok = file:write(Out, [io_lib:format("P4\n~w ~w\n", [N, N]) | Rows]),
    ok = file:close(Out).

row(Y, N) ->
    Ci = 2.0 * Y / N - 1.0,
    row(0, N, Ci, 0, 0, <<>>).

%% Bits gathered MSB first; a row's last byte padded with zeros.
row(X, N, _, Byte, Bits, Acc) when X =:= N ->
    case Bits of
        0 -> Acc;
        _ -> <<Acc/binary, (Byte bsl (8 - Bits))>>
    end;
row(X, N, Ci, Byte, Bits, Acc) ->
    Cr = 2.0 * X / N - 1.5,
    B = (Byte bsl 1) bor point(Cr, Ci),
    case Bits + 1 of
        8 -> row(X + 1, N, Ci, 0, 0, <<Acc/binary, B>>);
        Bits1 -> row(X + 1, N, Ci, B, Bits1, Acc)
    end.

point(Cr, Ci) -> point(?ITER, 0.0, 0.0, 0.0, 0.0, Cr, Ci).
point(0, _, _, Tr, Ti, _, _) -> in_set(Tr, Ti);
point(I, Zr, Zi, Tr, Ti, Cr, Ci) ->
    case Tr + Ti > 4.0 of
        true -> 0;
        false ->
            Zi1 = 2.0 * Zr * Zi + Ci,
            Zr1 = Tr - Ti + Cr,
            point(I - 1, Zr1, Zi1, Zr1 * Zr1, Zi1 * Zi1, Cr, Ci)
    end.

in_set(Tr, Ti) when Tr + Ti > 4.0 -> 0;
in_set(_, _) -> 1.
