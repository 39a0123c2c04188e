%% fannkuch-redux (Computer Language Benchmarks Game), written from the
%% published algorithm: every permutation of 1..N in the benchmark's order,
%% counting the prefix reversals ("flips") until the first element is 1;
%% checksum = sum of flips, added for even permutation indices, subtracted
%% for odd. The N! permutations are cut into ranges, one process each; a
%% range starts from the permutation its first index stands for.
%% Run: erlc fannkuch-redux.erl && erl -noshell -s fannkuch-redux main 7 -s init stop
-module('fannkuch-redux').
-export([main/1]).

-define(CHUNKS, 64).

main([Arg]) when is_atom(Arg) -> main([atom_to_list(Arg)]);
main([Arg]) ->
    N = list_to_integer(Arg),
    Total = fact(N),
    Chunks = min(?CHUNKS, Total),
    Parent = self(),
    Pids = [spawn(fun() ->
                      Lo = K * Total div Chunks,
                      Hi = (K + 1) * Total div Chunks,
                      Parent ! {self(), range(N, Lo, Hi)}
                  end) || K <- lists:seq(0, Chunks - 1)],
    {Sum, Max} = lists:foldl(fun(P, {S, M}) ->
                                     receive {P, {S1, M1}} -> {S + S1, max(M, M1)} end
                             end, {0, 0}, Pids),
    io:format("~w~nPfannkuchen(~w) = ~w~n", [Sum, N, Max]).

fact(0) -> 1;
fact(N) -> N * fact(N - 1).

%% Rotate the first K elements of P left by D.
rotate(P, K, D) ->
    {H, T} = lists:split(K, P),
    {A, B} = lists:split(D, H),
    B ++ A ++ T.

%% The permutation of index Idx and its counts [C1, ..., Cn-1].
first(N, Idx) -> first(lists:seq(0, N - 1), N - 1, Idx, []).
first(P, 0, _, Counts) -> {P, Counts};
first(P, I, Idx, Counts) ->
    F = fact(I),
    D = Idx div F,
    first(rotate(P, I + 1, D), I - 1, Idx rem F, [D | Counts]).

next(P, Counts) -> next(P, Counts, 1).
next(P, [C | Cs], I) ->
    P1 = rotate(P, I + 1, 1),
    case C + 1 > I of
        true -> {P2, Cs2} = next(P1, Cs, I + 1), {P2, [0 | Cs2]};
        false -> {P1, [C + 1 | Cs]}
    end.

flips([0 | _], F) -> F;
flips(P = [K | _], F) ->
    {H, T} = lists:split(K + 1, P),
    flips(lists:reverse(H, T), F + 1).

range(N, Lo, Hi) ->
    {P, Counts} = first(N, Lo),
    range(P, Counts, Lo, Hi, 0, 0).

range(P, Counts, Idx, Hi, Sum, Max) ->
    F = flips(P, 0),
    Sum1 = case Idx band 1 of 0 -> Sum + F; 1 -> Sum - F end,
    Max1 = max(Max, F),
    case Idx + 1 of
        Hi -> {Sum1, Max1};
        Next -> {P1, C1} = next(P, Counts), range(P1, C1, Next, Hi, Sum1, Max1)
    end.
