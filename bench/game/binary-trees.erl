%% binary-trees (Computer Language Benchmarks Game), written from the
%% published algorithm: allocate and check perfect binary trees; each depth
%% iteration runs in its own process.
%% Run: erlc binary-trees.erl && erl -noshell -s binary-trees main 10 -s init stop
-module('binary-trees').
-export([main/1]).

-define(MIN_DEPTH, 4).

make(0) -> {nil, nil};
make(D) -> {make(D - 1), make(D - 1)}.

check({nil, nil}) -> 1;
check({L, R}) -> 1 + check(L) + check(R).

main([Arg]) when is_atom(Arg) -> main([atom_to_list(Arg)]);
main([Arg]) ->
    N = list_to_integer(Arg),
    Max = max(?MIN_DEPTH + 2, N),
    Stretch = Max + 1,
    io:format("stretch tree of depth ~w\t check: ~w~n",
              [Stretch, check(make(Stretch))]),
    Long = make(Max),
    Parent = self(),
    Depths = lists:seq(?MIN_DEPTH, Max, 2),
    Pids = [spawn(fun() -> Parent ! {self(), depth(D, Max)} end) || D <- Depths],
    lists:foreach(fun(P) -> receive {P, Line} -> io:put_chars(Line) end end, Pids),
    io:format("long lived tree of depth ~w\t check: ~w~n", [Max, check(Long)]).

depth(D, Max) ->
    Iters = 1 bsl (Max - D + ?MIN_DEPTH),
    Sum = loop(Iters, D, 0),
    io_lib:format("~w\t trees of depth ~w\t check: ~w~n", [Iters, D, Sum]).

loop(0, _, Acc) -> Acc;
loop(I, D, Acc) -> loop(I - 1, D, Acc + check(make(D))).
