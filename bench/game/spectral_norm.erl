%% spectral-norm (Computer Language Benchmarks Game), written from the
%% published algorithm: the spectral norm of the infinite matrix A,
%% a(i,j) = 1/((i+j)(i+j+1)/2 + i + 1), by ten rounds of the power method
%% on AᵀA over the first N rows and columns. Each product of the matrix
%% and a vector is cut into one slice of rows per scheduler, each slice
%% computed by a process of its own.
%%
%% Run:  erlc spectral_norm.erl && erl -noshell -run spectral_norm main 100
%%       (prints 1.274219991)
-module(spectral_norm).
-export([main/1]).

main([Arg]) ->
    N = list_to_integer(Arg),
    io:format("~.9f~n", [spectral_norm(N, erlang:system_info(schedulers))]),
    halt(0);
main(_) ->
    main(["100"]).

a(I, J) ->
    IJ = I + J,
    1.0 / ((IJ * (IJ + 1)) div 2 + I + 1).

dot_row(U, N, I, Transposed) -> dot_row(U, N, I, Transposed, 0, 0.0).

dot_row(_U, N, _I, _T, J, Sum) when J >= N -> Sum;
dot_row(U, N, I, T, J, Sum) ->
    X = element(J + 1, U),
    Aij = case T of false -> a(I, J); true -> a(J, I) end,
    dot_row(U, N, I, T, J + 1, Sum + Aij * X).

times(U, N, Transposed, Slices) ->
    Me = self(),
    Size = (N + Slices - 1) div Slices,
    Bounds = [{K, K * Size, min(N, K * Size + Size)}
              || K <- lists:seq(0, Slices - 1), K * Size < N],
    [spawn(fun() ->
                   Me ! {slice, K, [dot_row(U, N, I, Transposed)
                                    || I <- lists:seq(From, To - 1)]}
           end) || {K, From, To} <- Bounds],
    Parts = [receive {slice, K, Part} -> Part end || {K, _, _} <- Bounds],
    list_to_tuple(lists:append(Parts)).

times_ata(U, N, Slices) ->
    times(times(U, N, false, Slices), N, true, Slices).

spectral_norm(N, Slices) ->
    U0 = list_to_tuple(lists:duplicate(N, 1.0)),
    {U, V} = power(10, U0, undefined, N, Slices),
    Us = tuple_to_list(U), Vs = tuple_to_list(V),
    VBV = lists:sum(lists:zipwith(fun(X, Y) -> X * Y end, Us, Vs)),
    VV = lists:sum([X * X || X <- Vs]),
    math:sqrt(VBV / VV).

power(0, U, V, _N, _Slices) -> {U, V};
power(K, U, _V, N, Slices) ->
    V = times_ata(U, N, Slices),
    power(K - 1, times_ata(V, N, Slices), V, N, Slices).
