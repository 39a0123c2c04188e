%% k-nucleotide (Computer Language Benchmarks Game), written from the
%% published algorithm: read a FASTA file on standard input, take the
%% sequence THREE, count its k-nucleotides (every substring of length k,
%% overlapping ones too), print the frequencies of the 1- and
%% 2-nucleotides in descending order and the counts of five given
%% sequences. Each count is made by a process of its own (one per length),
%% in a map from the k-nucleotide (a binary) to its count.
%%
%% Run:  erlc knucleotide.erl && erl -noshell -run knucleotide main < fasta-1000.txt
%% (the module is knucleotide: an Erlang module name cannot hold a dash)
-module(knucleotide).
-export([main/0, main/1]).

-define(WANTED, [<<"GGT">>, <<"GGTA">>, <<"GGTATT">>, <<"GGTATTTTAATT">>,
                 <<"GGTATTTTAATTTATAGT">>]).

main() -> main([]).

main(_) ->
    ok = io:setopts(standard_io, [binary, {encoding, latin1}]),
    Dna = read_three(),
    Me = self(),
    Ks = [1, 2 | [byte_size(W) || W <- ?WANTED]],
    Refs = [begin
                Ref = make_ref(),
                spawn(fun() -> Me ! {Ref, frequencies(Dna, K)} end),
                Ref
            end || K <- Ks],
    [One, Two | Others] = [receive {Ref, Counts} -> Counts end || Ref <- Refs],
    percentages(One),
    percentages(Two),
    [io:format("~b\t~s~n", [maps:get(W, Counts, 0), W])
     || {W, Counts} <- lists:zip(?WANTED, Others)],
    halt(0).

read_three() -> skip(io:get_line("")).

skip(eof) -> <<>>;
skip(<<">THREE", _/binary>>) -> collect(io:get_line(""), []);
skip(_) -> skip(io:get_line("")).

collect(eof, Acc) -> string:uppercase(iolist_to_binary(lists:reverse(Acc)));
collect(Line, Acc) -> collect(io:get_line(""), [string:chomp(Line) | Acc]).

frequencies(Dna, K) -> frequencies(Dna, K, 0, byte_size(Dna) - K, #{}).

frequencies(_Dna, _K, I, Last, Acc) when I > Last -> Acc;
frequencies(Dna, K, I, Last, Acc) ->
    Key = binary:part(Dna, I, K),
    frequencies(Dna, K, I + 1, Last,
                maps:update_with(Key, fun(N) -> N + 1 end, 1, Acc)).

percentages(Counts) ->
    Total = lists:sum(maps:values(Counts)),
    Sorted = lists:sort(fun({K1, N1}, {K2, N2}) -> {-N1, K1} =< {-N2, K2} end,
                        maps:to_list(Counts)),
    [io:format("~s ~.3f~n", [K, 100.0 * N / Total]) || {K, N} <- Sorted],
    io:format("~n").
