%% The input of reverse-complement, k-nucleotide and regex-redux: what the
%% Benchmarks Game's fasta program prints for N, written from its published
%% algorithm (ALU repeated for 2N characters, then 3N and 5N random
%% characters by the IUB and Homo sapiens frequencies, from the linear
%% congruential generator IM=139968, IA=3877, IC=29573, seed 42; lines of
%% 60).
%%
%% Run:  erlc fasta_input.erl && erl -noshell -run fasta_input main 1000 > fasta-1000.txt
-module(fasta_input).
-export([main/1]).

-define(IM, 139968).
-define(IA, 3877).
-define(IC, 29573).
-define(WIDTH, 60).

alu() ->
    <<"GGCCGGGCGCGGTGGCTCACGCCTGTAATCCCAGCACTTTGG"
      "GAGGCCGAGGCGGGCGGATCACCTGAGGTCAGGAGTTCGAGA"
      "CCAGCCTGGCCAACATGGTGAAACCCCGTCTCTACTAAAAAT"
      "ACAAAAATTAGCCGGGCGTGGTGGCGCGCGCCTGTAATCCCA"
      "GCTACTCGGGAGGCTGAGGCAGGAGAATCGCTTGAACCCGGG"
      "AGGCGGAGGTTGCAGTGAGCCGAGATCGCGCCACTGCACTCC"
      "AGCCTGGGCGACAGAGCGAGACTCCGTCTCAAAAA">>.

iub() ->
    [{$a, 0.27}, {$c, 0.12}, {$g, 0.12}, {$t, 0.27},
     {$B, 0.02}, {$D, 0.02}, {$H, 0.02}, {$K, 0.02},
     {$M, 0.02}, {$N, 0.02}, {$R, 0.02}, {$S, 0.02},
     {$V, 0.02}, {$W, 0.02}, {$Y, 0.02}].

homo_sapiens() ->
    [{$a, 0.3029549426680}, {$c, 0.1979883004921},
     {$g, 0.1975473066391}, {$t, 0.3015094502008}].

main([Arg]) ->
    N = list_to_integer(Arg),
    ok = io:setopts([binary, {encoding, latin1}]),
    file:write(standard_io, ">ONE Homo sapiens alu\n"),
    repeat(alu(), 2 * N),
    file:write(standard_io, ">TWO IUB ambiguity codes\n"),
    Seed = random(cumulative(iub()), 3 * N, 42),
    file:write(standard_io, ">THREE Homo sapiens frequency\n"),
    random(cumulative(homo_sapiens()), 5 * N, Seed),
    halt(0).

%% ALU over and over, N characters, lines of 60.
repeat(Alu, N) ->
    Len = byte_size(Alu),
    Double = <<Alu/binary, Alu/binary>>,
    repeat(Double, Len, 0, N).

repeat(_Double, _Len, _Pos, 0) -> ok;
repeat(Double, Len, Pos, N) ->
    W = min(?WIDTH, N),
    file:write(standard_io, [binary:part(Double, Pos, W), $\n]),
    repeat(Double, Len, (Pos + W) rem Len, N - W).

cumulative(Table) ->
    {Cum, _} = lists:mapfoldl(fun({C, P}, Acc) -> {{C, Acc + P}, Acc + P} end,
                              0.0, Table),
    Cum.

%% N random characters by the cumulative table, lines of 60; gives the
%% seed back for the next section.
random(_Cum, 0, Seed) -> Seed;
random(Cum, N, Seed) ->
    W = min(?WIDTH, N),
    {Line, Seed1} = line(Cum, W, Seed, []),
    file:write(standard_io, [Line, $\n]),
    random(Cum, N - W, Seed1).

line(_Cum, 0, Seed, Acc) -> {lists:reverse(Acc), Seed};
line(Cum, W, Seed, Acc) ->
    Seed1 = (Seed * ?IA + ?IC) rem ?IM,
    R = 1.0 * Seed1 / ?IM,
    line(Cum, W - 1, Seed1, [pick(Cum, R) | Acc]).

pick([{C, _}], _R) -> C;
pick([{C, P} | Rest], R) ->
    case R < P of true -> C; false -> pick(Rest, R) end.
