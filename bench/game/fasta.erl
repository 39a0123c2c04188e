%% fasta (Computer Language Benchmarks Game), written from the published
%% algorithm: three DNA sequences in FASTA format, 60 bases a line: the ALU
%% sequence repeated (2N bases), then 3N and 5N bases drawn from two
%% frequency tables with the benchmark's linear congruential generator
%% (seed 42, IM 139968, IA 3877, IC 29573).
%% Run: erlc fasta.erl && erl -noshell -s fasta main 1000 -s init stop
-module(fasta).
-export([main/1]).

-define(WIDTH, 60).
-define(IM, 139968).
-define(IA, 3877).
-define(IC, 29573).

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

homosapiens() ->
    [{$a, 0.3029549426680}, {$c, 0.1979883004921},
     {$g, 0.1975473066391}, {$t, 0.3015094502008}].

main([Arg]) when is_atom(Arg) -> main([atom_to_list(Arg)]);
main([Arg]) ->
    N = list_to_integer(Arg),
    io:put_chars(">ONE Homo sapiens alu\n"),
    repeat(alu(), 2 * N),
    io:put_chars(">TWO IUB ambiguity codes\n"),
    Seed = random_fasta(cumulative(iub()), 3 * N, 42),
    io:put_chars(">THREE Homo sapiens frequency\n"),
    random_fasta(cumulative(homosapiens()), 5 * N, Seed),
    ok.

%% The ALU sequence over and over, N bases.
repeat(Alu, N) -> repeat(<<Alu/binary, Alu/binary>>, byte_size(Alu), 0, N).
repeat(_, _, _, 0) -> ok;
repeat(Alu2, Len, Pos, N) ->
    L = min(?WIDTH, N),
    io:put_chars([binary:part(Alu2, Pos, L), $\n]),
    repeat(Alu2, Len, (Pos + L) rem Len, N - L).

cumulative(Table) -> cumulative(Table, 0.0).
cumulative([], _) -> [];
cumulative([{C, P} | T], Acc) -> [{C, Acc + P} | cumulative(T, Acc + P)].

%% N random bases, 60 a line; the generator's last seed.
random_fasta(_, 0, Seed) -> Seed;
random_fasta(Table, N, Seed) ->
    L = min(?WIDTH, N),
    {Line, Seed1} = line(Table, L, Seed, []),
    io:put_chars([Line, $\n]),
    random_fasta(Table, N - L, Seed1).

line(_, 0, Seed, Acc) -> {lists:reverse(Acc), Seed};
line(Table, L, Seed, Acc) ->
    Seed1 = (Seed * ?IA + ?IC) rem ?IM,
    R = Seed1 / ?IM,
    line(Table, L - 1, Seed1, [pick(Table, R) | Acc]).

pick([{C, _}], _) -> C;
pick([{C, P} | T], R) -> if R < P -> C; true -> pick(T, R) end.
